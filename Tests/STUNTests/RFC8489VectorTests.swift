// RFC 8489 Appendix B.1, "Sample Request with Long-Term Authentication with
// MESSAGE-INTEGRITY-SHA256 and USERHASH", as corrected by erratum 6268 (the published text has
// a wrong length and a MESSAGE-INTEGRITY-SHA256 value that no implementation reproduces).
// Parameters: username マトリックス, password "The<U+00AD>M<U+00AA>tr<U+2168>" ("TheMatrIX" after
// preparation), nonce "obMatJos2AAACf//499k954d6OL34oL9FSTvy64sA", realm "example.org",
// PASSWORD-ALGORITHM SHA-256.

import Testing
import ZoneCore
@testable import STUN

enum RFC8489B1 {
    static let request = bytes(hex: """
        00 01 00 90 21 12 a4 42 78 ad 34 33 c6 ad 72 c0 29 da 41 2e
        00 1e 00 20 4a 3c f3 8f ef 69 92 bd a9 52 c6 78 04 17 da 0f 24 81 94 15 56 9e 60 b2 05 c4 6e 41 40 7f 17 04
        00 15 00 29 6f 62 4d 61 74 4a 6f 73 32 41 41 41 43 66 2f 2f 34 39 39 6b 39 35 34 64
                    36 4f 4c 33 34 6f 4c 39 46 53 54 76 79 36 34 73 41 00 00 00
        00 14 00 0b 65 78 61 6d 70 6c 65 2e 6f 72 67 00
        00 1d 00 04 00 02 00 00
        00 1c 00 20 b5 c7 bf 00 5b 6c 52 a2 1c 51 c5 e8 92 f8 19 24 13 62 96 cb 92 7c 43 14 93 09 27 8c c6 51 8e 65
        """)
    static let nonce = "obMatJos2AAACf//499k954d6OL34oL9FSTvy64sA"
    static let userhash = STUNIntegrityKey.userhash(username: matrixUsername, realm: "example.org")

    static let message = STUNMessage(
        method: .binding, messageClass: .request, transactionID: longTermTransactionID,
        attributes: [.userhash(userhash), .nonce(nonce), .realm("example.org"), .passwordAlgorithm(.sha256)])
}

@Suite("RFC 8489 Appendix B.1 (erratum 6268)")
struct RFC8489VectorTests {
    @Test func userhashMatches() {
        #expect(hexString(RFC8489B1.userhash) == hexString(Array(RFC8489B1.request[24..<56])))
    }

    @Test func decodesAndVerifies() throws {
        let message = try STUNMessage(decoding: RFC8489B1.request)
        var expected = RFC8489B1.message
        expected.attributes.append(.messageIntegritySHA256(Array(RFC8489B1.request[(RFC8489B1.request.count - 32)...])))
        #expect(message == expected)
        #expect(message.passwordAlgorithm == .sha256)
        let key = try STUNIntegrityKey.longTerm(
            username: matrixUsername, realm: "example.org", password: matrixPassword, algorithm: .sha256)
        #expect(try STUNIntegrity.verify(RFC8489B1.request, key: key) == .hmacSHA256)
        let md5Key = try STUNIntegrityKey.longTerm(
            username: matrixUsername, realm: "example.org", password: "TheMatrIX")
        expectError(.badMessageIntegrity) { () throws(STUNError) in
            try STUNIntegrity.verify(RFC8489B1.request, key: md5Key)
        }
    }

    @Test func encodesByteExact() throws {
        let key = try STUNIntegrityKey.longTerm(
            username: matrixUsername, realm: "example.org", password: matrixPassword, algorithm: .sha256)
        let encoded = try RFC8489B1.message.encode(key: key, integrity: .hmacSHA256)
        #expect(hexString(encoded) == hexString(RFC8489B1.request))
    }

    @Test func survivesEverySplit() throws {
        let expected = try STUNMessage(decoding: RFC8489B1.request)
        verifyDatagramDecoder(RFC8489B1.request, expected: expected) { (b) throws(STUNError) in
            try STUNMessage(decoding: b)
        }
    }
}
