// The message type's bit interleaving (RFC 8489 §5, Figure 3), the header checks of §6.3, and
// transaction IDs (§5).

import Testing
import ZoneCore
@testable import STUN

@Suite("Message header")
struct MessageHeaderTests {
    @Test func wellKnownTypeValues() {
        // Values from RFC 8489 §5/§18.2 and RFC 8656 §17: Binding request 0x0001, success 0x0101,
        // error 0x0111; Allocate 0x0003/0x0103/0x0113; Send and Data indications 0x0016/0x0017.
        let cases: [(STUNMethod, STUNMessageClass, UInt16)] = [
            (.binding, .request, 0x0001), (.binding, .indication, 0x0011), (.binding, .successResponse, 0x0101),
            (.binding, .errorResponse, 0x0111), (.allocate, .request, 0x0003), (.allocate, .successResponse, 0x0103),
            (.allocate, .errorResponse, 0x0113), (.refresh, .request, 0x0004), (.send, .indication, 0x0016),
            (.data, .indication, 0x0017), (.createPermission, .request, 0x0008), (.channelBind, .request, 0x0009),
            (.channelBind, .successResponse, 0x0109),
        ]
        for (method, messageClass, raw) in cases {
            let type = STUNMessageType(method: method, messageClass: messageClass)
            #expect(type.rawValue == raw, "\(type)")
            #expect(STUNMessageType(rawValue: raw) == type)
        }
    }

    @Test func everyMethodAndClassRoundTrips() {
        for m in UInt16(0)...0xFFF {
            for c in STUNMessageClass.allCases {
                let type = STUNMessageType(method: STUNMethod(rawValue: m)!, messageClass: c)
                #expect(type.rawValue & 0xC000 == 0)
                #expect(STUNMessageType(rawValue: type.rawValue) == type)
            }
        }
        #expect(STUNMethod(rawValue: 0x1000) == nil)
    }

    @Test func headerParses() throws {
        let header = try STUNMessageHeader(parsing: RFC5769.request)
        #expect(header.messageType == STUNMessageType(method: .binding, messageClass: .request))
        #expect(header.length == 0x58)
        #expect(header.messageSize == RFC5769.request.count)
        #expect(header.transactionID == rfc5769TransactionID)
        verifyDatagramDecoder(Array(RFC5769.request[0..<20]), expected: header) { (b) throws(STUNError) in
            try STUNMessageHeader(parsing: b)
        }
    }

    @Test func headerErrors() {
        var b = RFC5769.request
        expectError(.truncated) { () throws(STUNError) in _ = try STUNMessageHeader(parsing: Array(b[0..<19])) }
        b[0] = 0x40
        expectError(.notSTUN) { () throws(STUNError) in _ = try STUNMessageHeader(parsing: b) }
        b = RFC5769.request
        b[4] = 0x22
        expectError(.badMagicCookie) { () throws(STUNError) in _ = try STUNMessageHeader(parsing: b) }
        b = RFC5769.request
        b[3] = 0x57
        expectError(.lengthNotMultipleOfFour) { () throws(STUNError) in _ = try STUNMessageHeader(parsing: b) }
    }

    @Test func looksLikeSTUN() {
        RFC5769.request.withUnsafeBytes { #expect(STUNMessageHeader.looksLikeSTUN($0)) }
        var b = RFC5769.request
        b[7] ^= 1
        b.withUnsafeBytes { #expect(!STUNMessageHeader.looksLikeSTUN($0)) }
        [UInt8](repeating: 0, count: 19).withUnsafeBytes { #expect(!STUNMessageHeader.looksLikeSTUN($0)) }
    }

    @Test func transactionIDs() {
        var a = SeededRandom(seed: 42)
        var b = SeededRandom(seed: 42)
        let first = STUNTransactionID.random(using: &a)
        #expect(first == STUNTransactionID.random(using: &b))
        #expect(first != STUNTransactionID.random(using: &a))
        #expect(STUNTransactionID(bytes: first.bytes) == first)
        #expect(first.bytes.count == 12)
        #expect(STUNTransactionID(bytes: [UInt8](repeating: 0, count: 11)) == nil)
        #expect(rfc5769TransactionID.description == "b7e7a701bc34d686fa87dfae")
        #expect(STUNTransactionID.random() != STUNTransactionID.random())
    }
}
