// Every attribute this module knows, encoded in a message and decoded back (RFC 8489 §14,
// RFC 8656 §18, RFC 8445 §7.1), with boundary values; and attributes it does not know, kept raw.

import Testing
import ZoneCore
@testable import STUN

private let v4 = try! Endpoint(parsing: "203.0.113.7:3478")
private let v6 = try! Endpoint(parsing: "[2001:db8::dead:beef]:65535")

/// Every attribute kind, with representative values.
let sampleAttributes: [STUNAttribute] = [
    .mappedAddress(v4), .mappedAddress(v6), .xorMappedAddress(v4), .xorMappedAddress(v6),
    .username(""), .username("abcd:efgh"), .username(String(repeating: "u", count: 512)),
    .userhash([UInt8](repeating: 0xA5, count: 32)),
    .passwordAlgorithm(.md5), .passwordAlgorithm(.sha256),
    .passwordAlgorithm(STUNPasswordAlgorithm(number: 9, parameters: [1, 2, 3])),
    .passwordAlgorithms([.md5, .sha256]),
    .passwordAlgorithms([STUNPasswordAlgorithm(number: 7, parameters: [9]), .sha256]),
    .passwordAlgorithms([]),
    .errorCode(STUNErrorCode(code: 401)), .errorCode(STUNErrorCode(code: 699, reason: "")),
    .errorCode(STUNErrorCode(code: 300, reason: "Try \u{00E9}lsewhere")),
    .unknownAttributes([STUNAttributeType(rawValue: 0x7777)]),
    .unknownAttributes([STUNAttributeType(rawValue: 1), STUNAttributeType(rawValue: 0x0FFF)]),
    .realm("example.org"), .nonce("f//499k954d6OL34oL9FSTvy64sA"), .software("ZoneRTC \u{1F4DE}"),
    .alternateServer(v4), .alternateServer(v6),
    .priority(0), .priority(.max), .useCandidate,
    .iceControlled(tieBreaker: 0x0123_4567_89AB_CDEF), .iceControlling(tieBreaker: .max),
    .channelNumber(0x4000), .channelNumber(0x4FFF), .lifetime(seconds: 600),
    .xorPeerAddress(v4), .xorPeerAddress(v6), .data([]), .data([1]), .data(Array(0...255)),
    .xorRelayedAddress(v4), .xorRelayedAddress(v6),
    .requestedAddressFamily(.ipv4), .requestedAddressFamily(.ipv6),
    .evenPort(reserveNextPort: true), .evenPort(reserveNextPort: false),
    .requestedTransport(protocolNumber: STUNAttribute.transportUDP), .dontFragment,
    .reservationToken(0xFEED_FACE_CAFE_BEEF),
    .unknown(type: STUNAttributeType(rawValue: 0x7FFF), value: [1, 2, 3]),
    .unknown(type: STUNAttributeType(rawValue: 0xC001), value: []),
]

@Suite("Attribute round trips")
struct AttributeRoundTripTests {
    @Test(arguments: sampleAttributes)
    func roundTrip(attribute: STUNAttribute) throws {
        var random = SeededRandom(seed: 7)
        let message = STUNMessage(
            method: .allocate, messageClass: .request, transactionID: .random(using: &random), attributes: [attribute])
        for padding: UInt8 in [0x00, 0x20, 0xFF] {
            let encoded = try message.encode(padding: padding)
            #expect(encoded.count % 4 == 0)
            #expect(try STUNMessage(decoding: encoded) == message)
        }
        // And once more among other attributes, with integrity and fingerprint around it.
        let key = STUNIntegrityKey(bytes: Array("key".utf8))
        var crowded = message
        crowded.attributes = [.software("x"), attribute, .lifetime(seconds: 1)]
        let encoded = try crowded.encode(key: key, integrity: [.hmacSHA1, .hmacSHA256], fingerprint: true)
        let decoded = try STUNMessage(decoding: encoded)
        #expect(decoded.attributes.filter { !$0.isComputedByEncoder } == crowded.attributes)
        #expect(try STUNIntegrity.verify(encoded, key: key) == .hmacSHA256)
        verifyDatagramDecoder(encoded, expected: decoded) { (b) throws(STUNError) in try STUNMessage(decoding: b) }
    }

    @Test func xorAddressesAreMaskedOnTheWire() throws {
        // XOR-MAPPED-ADDRESS must not carry the address in the clear (RFC 8489 §14.2).
        let id = rfc5769TransactionID
        let m = STUNMessage(method: .binding, messageClass: .successResponse, transactionID: id,
                            attributes: [.xorMappedAddress(v4)])
        let e = try m.encode()
        #expect(Array(e[24..<32]) != [0, 1, 0x0D, 0x96, 203, 0, 113, 7])
        let plain = STUNMessage(method: .binding, messageClass: .successResponse, transactionID: id,
                                attributes: [.mappedAddress(v4)])
        #expect(Array(try plain.encode()[24..<32]) == [0, 1, 0x0D, 0x96, 203, 0, 113, 7])
    }

    @Test func unknownAttributesArePreservedAndReported() throws {
        let m = STUNMessage(
            method: .binding, messageClass: .request, transactionID: rfc5769TransactionID,
            attributes: [
                .unknown(type: STUNAttributeType(rawValue: 0x0042), value: [9, 9, 9]),
                .unknown(type: STUNAttributeType(rawValue: 0x8042), value: [1]),
                .username("u"),
                .unknown(type: STUNAttributeType(rawValue: 0x0042), value: []),
                .unknown(type: STUNAttributeType(rawValue: 0x0043), value: [7, 7, 7, 7, 7]),
            ])
        let decoded = try STUNMessage(decoding: try m.encode())
        #expect(decoded == m)
        #expect(decoded.unknownComprehensionRequiredAttributes.map(\.rawValue) == [0x0042, 0x0043])
        // What a server does with them: a 420 response listing them.
        let response = decoded.errorResponse(
            code: STUNErrorCode.unknownAttribute,
            attributes: [.unknownAttributes(decoded.unknownComprehensionRequiredAttributes)])
        let answer = try STUNMessage(decoding: try response.encode())
        #expect(answer.transactionID == m.transactionID && answer.messageType.rawValue == 0x0111)
        #expect(decoded.successResponse().messageType.rawValue == 0x0101)
        #expect(answer.errorCode == STUNErrorCode(code: 420, reason: "Unknown Attribute"))
        #expect(answer.unknownAttributes?.map(\.rawValue) == [0x0042, 0x0043])
    }

    @Test func accessorsFindFirstOccurrences() throws {
        let peers = [v4, v6, v4]
        let m = STUNMessage(
            method: .createPermission, messageClass: .request, transactionID: rfc5769TransactionID,
            attributes: peers.map { .xorPeerAddress($0) } + [
                .lifetime(seconds: 1), .lifetime(seconds: 2), .dontFragment, .evenPort(reserveNextPort: true),
                .requestedTransport(protocolNumber: 17), .reservationToken(5), .channelNumber(0x4001),
                .requestedAddressFamily(.ipv6), .data([1]), .xorRelayedAddress(v6), .useCandidate,
                .iceControlling(tieBreaker: 3), .priority(9), .alternateServer(v4), .mappedAddress(v6),
                .passwordAlgorithms([.sha256]), .userhash([UInt8](repeating: 1, count: 32)),
            ])
        let d = try STUNMessage(decoding: try m.encode())
        #expect(d.xorPeerAddresses == peers)
        #expect(d.lifetime == 1)
        #expect(d.dontFragment && d.useCandidate)
        #expect(d.evenPort == true && d.requestedTransport == 17 && d.reservationToken == 5)
        #expect(d.channelNumber == 0x4001 && d.requestedAddressFamily == .ipv6 && d.data == [1])
        #expect(d.xorRelayedAddress == v6 && d.iceControlling == 3 && d.priority == 9)
        #expect(d.alternateServer == v4 && d.mappedAddress == v6 && d.passwordAlgorithms == [.sha256])
        #expect(d.userhash?.count == 32 && d.username == nil && d.iceControlled == nil)
        #expect(d.contains(.dontFragment) && !d.contains(.software))
    }

    @Test func encodeRejectsInvalidValues() {
        func encode(_ a: STUNAttribute) throws(STUNError) {
            _ = try STUNMessage(method: .binding, messageClass: .request, transactionID: rfc5769TransactionID,
                                attributes: [a]).encode()
        }
        expectError(.valueTooLong) { () throws(STUNError) in try encode(.username(String(repeating: "u", count: 513))) }
        expectError(.valueTooLong) { () throws(STUNError) in try encode(.realm(String(repeating: "r", count: 764))) }
        expectError(.invalidAttributeLength) { () throws(STUNError) in try encode(.userhash([1, 2])) }
        expectError(.invalidErrorCode) { () throws(STUNError) in try encode(.errorCode(STUNErrorCode(code: 299))) }
        expectError(.invalidErrorCode) { () throws(STUNError) in try encode(.errorCode(STUNErrorCode(code: 700))) }
        expectError(.valueTooLong) { () throws(STUNError) in try encode(.data([UInt8](repeating: 0, count: 0x10000))) }
        expectError(.messageTooLong) { () throws(STUNError) in
            _ = try STUNMessage(method: .send, messageClass: .indication, transactionID: rfc5769TransactionID,
                                attributes: [.data([UInt8](repeating: 0, count: 0xFFF0)), .data(Array(1...9))])
                .encode()
        }
    }

    @Test func computedAttributesInTheListAreNotWritten() throws {
        let m = STUNMessage(method: .binding, messageClass: .request, transactionID: rfc5769TransactionID,
                            attributes: [
                                .fingerprint(1), .messageIntegrity([UInt8](repeating: 0, count: 20)), .priority(1),
                                .messageIntegritySHA256([UInt8](repeating: 0, count: 32)),
                            ])
        let decoded = try STUNMessage(decoding: try m.encode())
        #expect(decoded.attributes == [.priority(1)])
    }
}
