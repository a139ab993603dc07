// MESSAGE-INTEGRITY and MESSAGE-INTEGRITY-SHA256 computation and checking (RFC 8489 §14.5–14.6,
// §9), including messages with attributes after MESSAGE-INTEGRITY, truncated SHA-256 MACs, and
// keys (§9.1.1, §9.2.2).

import Testing
import ZoneCore
@testable import STUN

/// `bytes` with `attribute` appended as raw TLV and the header length fixed.
private func appending(_ bytes: [UInt8], type: UInt16, value: [UInt8]) -> [UInt8] {
    var b = bytes + [UInt8(type >> 8), UInt8(type & 0xFF), 0, UInt8(value.count)] + value
    while b.count % 4 != 0 { b.append(0) }
    let length = b.count - 20
    b[2] = UInt8(length >> 8)
    b[3] = UInt8(length & 0xFF)
    return b
}

/// `bytes` with a correct FINGERPRINT appended.
private func appendingFingerprint(_ bytes: [UInt8]) -> [UInt8] {
    var b = appending(bytes, type: 0x8028, value: [0, 0, 0, 0])
    let crc = CRC32.checksum(b[0..<(b.count - 8)]) ^ 0x5354_554E
    for i in 0..<4 { b[b.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32(i))) }
    return b
}

@Suite("Message integrity")
struct IntegrityTests {
    let key = STUNIntegrityKey(bytes: Array("secret".utf8))
    let message = STUNMessage(method: .binding, messageClass: .request, transactionID: rfc5769TransactionID,
                              attributes: [.username("abcd:efgh"), .priority(0x6E00_01FF)])

    @Test func attributesAfterMessageIntegrityAreIgnored() throws {
        // RFC 8489 §14.5: apart from MESSAGE-INTEGRITY-SHA256 and FINGERPRINT, attributes after
        // MESSAGE-INTEGRITY are ignored — so a middlebox appending one does not break the MAC.
        let signed = try message.encode(key: key)
        let extended = appendingFingerprint(appending(signed, type: 0x0042, value: [1, 2, 3]))
        let layout = try STUNMessageLayout(scanning: extended)
        #expect(layout.ignoredAttributeCount == 1 && layout.attributeCount == 4)
        let decoded = try STUNMessage(decoding: extended)
        #expect(decoded.attributes.count == 4)
        #expect(decoded.unknownComprehensionRequiredAttributes.isEmpty)
        #expect(try STUNIntegrity.verify(extended, key: key) == .hmacSHA1)
        // A second MESSAGE-INTEGRITY after the first is ignored too, whatever it holds.
        let doubled = appending(signed, type: 0x0008, value: [UInt8](repeating: 0, count: 20))
        #expect(try STUNIntegrity.verify(doubled, key: key) == .hmacSHA1)
        #expect(try STUNMessageLayout(scanning: doubled).ignoredAttributeCount == 1)
    }

    @Test func attributesAfterSHA256AreIgnored() throws {
        let signed = try message.encode(key: key, integrity: .hmacSHA256)
        let extended = appendingFingerprint(appending(signed, type: 0x8022, value: Array("late".utf8)))
        #expect(try STUNIntegrity.verify(extended, key: key) == .hmacSHA256)
        #expect(try STUNMessage(decoding: extended).software == nil)
    }

    @Test func bothIntegritiesAndFingerprint() throws {
        let signed = try message.encode(key: key, integrity: [.hmacSHA1, .hmacSHA256], fingerprint: true)
        let layout = try STUNMessageLayout(scanning: signed)
        #expect(layout.messageIntegrityOffset == 20 + 16 + 8)
        #expect(layout.messageIntegritySHA256Offset == 20 + 16 + 8 + 24)
        #expect(layout.fingerprintOffset == signed.count - 8)
        #expect(try STUNIntegrity.verify(signed, key: key) == .hmacSHA256)
        // The SHA-1 MAC alone, as an RFC 5389 peer checks it: strip what follows and verify.
        let classicLength = layout.messageIntegrityOffset! + 24
        var classic = Array(signed[0..<classicLength])
        classic[3] = UInt8(classicLength - 20)
        #expect(try STUNIntegrity.verify(classic, key: key) == .hmacSHA1)
    }

    @Test func truncatedSHA256IsAccepted() throws {
        // §14.6 allows MESSAGE-INTEGRITY-SHA256 truncated to 16–32 bytes, in steps of 4.
        let full = try message.encode(key: key, integrity: .hmacSHA256)
        for length in stride(from: 16, through: 28, by: 4) {
            let start = full.count - 36
            // The MAC over a shorter attribute differs (the header length counts it), so compute
            // it the way a truncating sender would: with the length of the truncated message.
            var prefix = Array(full[0..<start])
            let covered = start + 4 + length - 20
            prefix[2] = UInt8(covered >> 8)
            prefix[3] = UInt8(covered & 0xFF)
            let mac = key.hmacSHA256.authenticationCode(for: prefix)
            let truncated = prefix + [0x00, 0x1C, 0, UInt8(length)] + mac[0..<length]
            #expect(try STUNIntegrity.verify(truncated, key: key) == .hmacSHA256, "length \(length)")
            var forged = truncated
            forged[forged.count - 1] ^= 1
            expectError(.badMessageIntegrity) { () throws(STUNError) in try STUNIntegrity.verify(forged, key: key) }
        }
    }

    @Test func badAndMissingIntegrity() throws {
        let signed = try message.encode(key: key, fingerprint: true)
        let other = STUNIntegrityKey(bytes: Array("Secret".utf8))
        expectError(.badMessageIntegrity) { () throws(STUNError) in try STUNIntegrity.verify(signed, key: other) }
        // Any changed byte before the MAC breaks it (the fingerprint is not checked by verify).
        for i in [0, 1, 3, 8, 19, 20, 25, 40] where i < signed.count - 32 {
            var tampered = signed
            tampered[i] ^= 0x01
            let kind = errorKind { () throws(STUNError) in try STUNIntegrity.verify(tampered, key: key) }
            #expect(kind != nil, "byte \(i)")
        }
        expectError(.missingMessageIntegrity) { () throws(STUNError) in
            try STUNIntegrity.verify(try message.encode(fingerprint: true), key: key)
        }
    }

    @Test func keys() throws {
        #expect(try STUNIntegrityKey.shortTerm(password: "pass word").bytes == Array("pass word".utf8))
        let md5 = try STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p")
        #expect(md5.bytes == MD5.hash(Array("u:r:p".utf8)))
        let sha = try STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p", algorithm: .sha256)
        #expect(sha.bytes == SHA256.hash(Array("u:r:p".utf8)))
        expectError(.invalidAttributeValue) { () throws(STUNError) in
            _ = try STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p",
                                              algorithm: STUNPasswordAlgorithm(number: 3))
        }
        expectError(.prohibitedCharacter) { () throws(STUNError) in
            _ = try STUNIntegrityKey.shortTerm(password: "a\u{0007}")
        }
    }
}
