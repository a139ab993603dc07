// Hostile and broken input: every way a datagram can fail to be a STUN message throws a
// `STUNError` of a specific kind (RFC 8489 §6.3 checks, §14 attribute rules), never traps.

import Testing
import ZoneCore
@testable import STUN

/// A message built by hand: header with `type`, then the TLVs as given (each padded with
/// `padding`); the length field is the attributes' size unless `length` overrides it.
func rawMessage(
    type: UInt16 = 0x0001, _ attributes: [(UInt16, [UInt8])], padding: UInt8 = 0, length: Int? = nil,
    transactionID: STUNTransactionID = rfc5769TransactionID
) -> [UInt8] {
    var body: [UInt8] = []
    for (t, value) in attributes {
        body += [UInt8(t >> 8), UInt8(t & 0xFF), UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
        while body.count % 4 != 0 { body.append(padding) }
    }
    let n = length ?? body.count
    return [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), 0x21, 0x12, 0xA4, 0x42]
        + transactionID.bytes + body
}

private func decode(_ b: [UInt8]) throws(STUNError) { _ = try STUNMessage(decoding: b) }

@Suite("Error paths")
struct ErrorPathTests {
    @Test func framingErrors() {
        let good = rawMessage([(0x0024, [0, 0, 0, 1])])
        expectError(.truncated) { () throws(STUNError) in try decode([]) }
        expectError(.truncated) { () throws(STUNError) in try decode(Array(good[0..<19])) }
        expectError(.truncated) { () throws(STUNError) in try decode(Array(good[0..<27])) }
        expectError(.trailingBytes) { () throws(STUNError) in try decode(good + [0]) }
        expectError(.trailingBytes) { () throws(STUNError) in try decode(good + [0, 0, 0, 0]) }
        var bad = good
        bad[0] = 0x80
        expectError(.notSTUN) { () throws(STUNError) in try decode(bad) }
        bad = good
        bad[5] = 0x13
        expectError(.badMagicCookie) { () throws(STUNError) in try decode(bad) }
        expectError(.lengthNotMultipleOfFour) { () throws(STUNError) in
            try decode(rawMessage([(0x0024, [0, 0, 0, 1])], length: 6) + [0, 0])
        }
    }

    @Test func attributeOverrunningTheMessage() {
        // An attribute that claims 8 bytes when 4 remain; and one whose padding would overrun.
        var b = rawMessage([(0x0024, [0, 0, 0, 1])])
        b[23] = 8
        expectError(.attributeOverrun) { () throws(STUNError) in try decode(b) }
        b = rawMessage([(0x0024, [0, 0, 0, 1])])
        b[23] = 5
        expectError(.attributeOverrun) { () throws(STUNError) in try decode(b) }
        b = rawMessage([(0x0013, [1, 2, 3, 4, 5, 6, 7, 8])])
        b[22] = 0xFF
        expectError(.attributeOverrun) { () throws(STUNError) in try decode(b) }
    }

    @Test func wrongAttributeLengths() {
        let cases: [(UInt16, Int)] = [
            (0x0024, 3), (0x0024, 8), (0x0025, 4), (0x8029, 4), (0x802A, 12), (0x000C, 2), (0x000D, 8),
            (0x0017, 1), (0x0018, 4), (0x0019, 2), (0x001A, 1), (0x0022, 4), (0x001E, 31), (0x0008, 16),
            (0x001C, 12), (0x001C, 18), (0x001C, 36), (0x8028, 8), (0x000A, 3), (0x0009, 3),
            (0x0001, 3), (0x0020, 20), (0x0020, 7), (0x0012, 8 + 12), (0x001D, 2), (0x001D, 8),
        ]
        for (type, length) in cases {
            var value = [UInt8](repeating: 0, count: length)
            // Address attributes need a valid family to get as far as the length check.
            if [0x0001, 0x0020, 0x0012].contains(type), length > 1 { value[1] = 0x01 }
            if type == 0x001D, length == 8 { value[3] = 0 }  // zero-length parameters, 4 extra bytes
            let kind = errorKind { () throws(STUNError) in try decode(rawMessage([(type, value)])) }
            #expect(kind == .invalidAttributeLength,
                    "type 0x\(String(type, radix: 16)) length \(length): \(String(describing: kind))")
        }
    }

    @Test func wrongAddressFamily() {
        for type: UInt16 in [0x0001, 0x0020, 0x8023, 0x0012, 0x0016] {
            expectError(.invalidAddressFamily) { () throws(STUNError) in
                try decode(rawMessage([(type, [0, 0x03, 0, 1, 1, 2, 3, 4])]))
            }
            // IPv4 family with an IPv6-sized value, and the reverse.
            expectError(.invalidAttributeLength) { () throws(STUNError) in
                try decode(rawMessage([(type, [0, 0x01, 0, 1] + [UInt8](repeating: 0, count: 16))]))
            }
            expectError(.invalidAttributeLength) { () throws(STUNError) in
                try decode(rawMessage([(type, [0, 0x02, 0, 1, 1, 2, 3, 4])]))
            }
        }
        expectError(.invalidAddressFamily) { () throws(STUNError) in
            try decode(rawMessage([(0x0017, [0x03, 0, 0, 0])]))
        }
    }

    @Test func badText() {
        expectError(.invalidText) { () throws(STUNError) in try decode(rawMessage([(0x0006, [0x61, 0xFF, 0x62])])) }
        expectError(.invalidText) { () throws(STUNError) in try decode(rawMessage([(0x8022, [0xC3])])) }
        expectError(.invalidText) { () throws(STUNError) in
            try decode(rawMessage([(0x0009, [0, 0, 4, 1, 0xED, 0xA0, 0x80])]))
        }
        expectError(.valueTooLong) { () throws(STUNError) in
            try decode(rawMessage([(0x0006, [UInt8](repeating: 0x61, count: 513))]))
        }
        expectError(.valueTooLong) { () throws(STUNError) in
            try decode(rawMessage([(0x0015, [UInt8](repeating: 0x61, count: 764))]))
        }
    }

    @Test func badErrorCodes() {
        expectError(.invalidErrorCode) { () throws(STUNError) in try decode(rawMessage([(0x0009, [0, 0, 2, 0])])) }
        expectError(.invalidErrorCode) { () throws(STUNError) in try decode(rawMessage([(0x0009, [0, 0, 7, 0])])) }
        expectError(.invalidErrorCode) { () throws(STUNError) in try decode(rawMessage([(0x0009, [0, 0, 4, 100])])) }
        // Reserved bits are ignored.
        #expect(errorKind { () throws(STUNError) in try decode(rawMessage([(0x0009, [0xFF, 0xFF, 0xFC, 1])])) } == nil)
    }

    @Test func badPasswordAlgorithms() {
        // An entry claiming more parameter bytes than remain.
        expectError(.invalidAttributeLength) { () throws(STUNError) in
            try decode(rawMessage([(0x8002, [0, 1, 0, 8, 1, 2, 3, 4])]))
        }
        expectError(.invalidAttributeLength) { () throws(STUNError) in
            try decode(rawMessage([(0x8002, [0, 1, 0, 0, 0, 2])]))
        }
    }

    @Test func fingerprintMustBeLastAndRight() throws {
        let m = STUNMessage(method: .binding, messageClass: .request, transactionID: rfc5769TransactionID,
                            attributes: [.priority(1)])
        var good = try m.encode(fingerprint: true)
        #expect(STUNIntegrity.hasValidFingerprint(good))
        good[good.count - 1] ^= 1
        expectError(.badFingerprint) { () throws(STUNError) in try decode(good) }
        #expect(!STUNIntegrity.hasValidFingerprint(good))
        // Decoding without the check accepts it, as received.
        #expect(try STUNMessage(decoding: good, verifyingFingerprint: false).attributes.count == 2)
        // Any attribute after FINGERPRINT.
        let after = rawMessage([(0x8028, [0, 0, 0, 0]), (0x0024, [0, 0, 0, 1])])
        expectError(.fingerprintNotLast) { () throws(STUNError) in try decode(after) }
        // A corrupted body byte is caught by the fingerprint even though it still parses.
        var body = try m.encode(fingerprint: true)
        body[27] ^= 0x40
        expectError(.badFingerprint) { () throws(STUNError) in try decode(body) }
    }

    @Test func headerOnlyMessageDecodes() throws {
        let m = try STUNMessage(decoding: rawMessage([]))
        #expect(m.attributes.isEmpty && m.method == .binding && m.messageClass == .request)
    }

    @Test func unknownMethodDecodes() throws {
        let m = try STUNMessage(decoding: rawMessage(type: 0x3FFF, []))
        #expect(m.method.rawValue == 0xFFF && m.messageClass == .errorResponse)
        #expect(m.method.description == "method 0xfff")
    }
}
