// RFC 5769 ("Test Vectors for STUN"), §2.1–2.4, byte for byte: decoding, integrity and
// fingerprint checks, and encoding back to the same bytes. The samples pad SOFTWARE and USERNAME
// with 0x20 (§2: "padding bytes ... are set to 0x20"), which the decoder must ignore and the
// encoder reproduces when asked to.

import Testing
import ZoneCore
@testable import STUN

enum RFC5769 {
    /// §2.1 Sample Request.
    static let request = bytes(hex: """
        00 01 00 58 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 10 53 54 55 4e 20 74 65 73 74 20 63 6c 69 65 6e 74
        00 24 00 04 6e 00 01 ff
        80 29 00 08 93 2f f9 b1 51 26 3b 36
        00 06 00 09 65 76 74 6a 3a 68 36 76 59 20 20 20
        00 08 00 14 9a ea a7 0c bf d8 cb 56 78 1e f2 b5 b2 d3 f2 49 c1 b5 71 a2
        80 28 00 04 e5 7a 3b cf
        """)

    /// §2.2 Sample IPv4 Response.
    static let ipv4Response = bytes(hex: """
        01 01 00 3c 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
        00 20 00 08 00 01 a1 47 e1 12 a6 43
        00 08 00 14 2b 91 f5 99 fd 9e 90 c3 8c 74 89 f9 2a f9 ba 53 f0 6b e7 d7
        80 28 00 04 c0 7d 4c 96
        """)

    /// §2.3 Sample IPv6 Response.
    static let ipv6Response = bytes(hex: """
        01 01 00 48 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
        00 20 00 14 00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9
        00 08 00 14 a3 82 95 4e 4b e6 7b f1 17 84 c9 7c 82 92 c2 75 bf e3 ed 41
        80 28 00 04 c8 fb 0b 4c
        """)

    /// §2.4 Sample Request with Long-Term Authentication.
    static let longTermRequest = bytes(hex: """
        00 01 00 60 21 12 a4 42 78 ad 34 33 c6 ad 72 c0 29 da 41 2e
        00 06 00 12 e3 83 9e e3 83 88 e3 83 aa e3 83 83 e3 82 af e3 82 b9 00 00
        00 15 00 1c 66 2f 2f 34 39 39 6b 39 35 34 64 36 4f 4c 33 34 6f 4c 39 46 53 54 76 79 36 34 73 41
        00 14 00 0b 65 78 61 6d 70 6c 65 2e 6f 72 67 00
        00 08 00 14 f6 70 24 65 6d d6 4a 3e 02 b8 e0 71 2e 85 c9 a2 8c a8 96 66
        """)

    static let mappedEndpointV4 = try! Endpoint(parsing: "192.0.2.1:32853")
    static let mappedEndpointV6 = try! Endpoint(parsing: "[2001:db8:1234:5678:11:2233:4455:6677]:32853")

    static let requestMessage = STUNMessage(
        method: .binding, messageClass: .request, transactionID: rfc5769TransactionID,
        attributes: [
            .software("STUN test client"), .priority(0x6E00_01FF), .iceControlled(tieBreaker: 0x932F_F9B1_5126_3B36),
            .username("evtj:h6vY"),
        ])

    static func response(_ endpoint: Endpoint) -> STUNMessage {
        STUNMessage(
            method: .binding, messageClass: .successResponse, transactionID: rfc5769TransactionID,
            attributes: [.software("test vector"), .xorMappedAddress(endpoint)])
    }

    static let longTermMessage = STUNMessage(
        method: .binding, messageClass: .request, transactionID: longTermTransactionID,
        attributes: [.username(matrixUsername), .nonce("f//499k954d6OL34oL9FSTvy64sA"), .realm("example.org")])
}

/// What decoding gives: the message's own attributes followed by the computed ones as received.
private func withComputed(_ message: STUNMessage, _ computed: [STUNAttribute]) -> STUNMessage {
    var m = message
    m.attributes += computed
    return m
}

@Suite("RFC 5769 test vectors")
struct RFC5769Tests {
    @Test func sampleRequestDecodes() throws {
        let message = try STUNMessage(decoding: RFC5769.request)
        let mi = Array(RFC5769.request[80..<100])
        #expect(message == withComputed(RFC5769.requestMessage, [.messageIntegrity(mi), .fingerprint(0xE57A_3BCF)]))
        #expect(message.username == "evtj:h6vY")
        #expect(message.software == "STUN test client")
        #expect(message.priority == 0x6E00_01FF)
        #expect(message.iceControlled == 0x932F_F9B1_5126_3B36)
    }

    @Test func sampleRequestVerifies() throws {
        let key = try STUNIntegrityKey.shortTerm(password: rfc5769Password)
        #expect(try STUNIntegrity.verify(RFC5769.request, key: key) == .hmacSHA1)
        try STUNIntegrity.verifyFingerprint(RFC5769.request)
        let wrong = try STUNIntegrityKey.shortTerm(password: "VOkJxbRl1RmTxUk/WvJxBT")
        expectError(.badMessageIntegrity) { () throws(STUNError) in
            try STUNIntegrity.verify(RFC5769.request, key: wrong)
        }
    }

    @Test("one layout scan serves decoding and the integrity check, with the same results as scanning twice")
    func layoutScannedOnce() throws {
        let key = try STUNIntegrityKey.shortTerm(password: rfc5769Password)
        let wrong = try STUNIntegrityKey.shortTerm(password: "VOkJxbRl1RmTxUk/WvJxBT")
        for vector in [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response] {
            let layout = try STUNMessageLayout(scanning: vector)
            #expect(try STUNMessage(decoding: vector, layout: layout) == STUNMessage(decoding: vector))
            #expect(try STUNIntegrity.verify(vector, layout: layout, key: key) == .hmacSHA1)
            expectError(.badMessageIntegrity) { () throws(STUNError) in
                try STUNIntegrity.verify(vector, layout: layout, key: wrong)
            }
            // A wrong FINGERPRINT is still caught when the layout was scanned apart.
            var corrupted = vector
            corrupted[corrupted.count - 1] ^= 1
            let corruptedLayout = try STUNMessageLayout(scanning: corrupted)
            expectError(.badFingerprint) { () throws(STUNError) in
                _ = try STUNMessage(decoding: corrupted, layout: corruptedLayout)
            }
        }
    }

    @Test func sampleRequestEncodesByteExact() throws {
        let key = try STUNIntegrityKey.shortTerm(password: rfc5769Password)
        let encoded = try RFC5769.requestMessage.encode(key: key, fingerprint: true, padding: 0x20)
        #expect(hexString(encoded) == hexString(RFC5769.request))
    }

    @Test(arguments: [
        (RFC5769.ipv4Response, RFC5769.mappedEndpointV4), (RFC5769.ipv6Response, RFC5769.mappedEndpointV6),
    ])
    func sampleResponses(vector: [UInt8], endpoint: Endpoint) throws {
        let message = try STUNMessage(decoding: vector)
        let miOffset = vector.count - 32
        let expected = withComputed(RFC5769.response(endpoint), [
            .messageIntegrity(Array(vector[(miOffset + 4)..<(miOffset + 24)])),
            .fingerprint(vector[(vector.count - 4)...].reduce(0) { $0 << 8 | UInt32($1) }),
        ])
        #expect(message == expected)
        #expect(message.xorMappedAddress == endpoint)
        let key = try STUNIntegrityKey.shortTerm(password: rfc5769Password)
        #expect(try STUNIntegrity.verify(vector, key: key) == .hmacSHA1)
        let encoded = try RFC5769.response(endpoint).encode(key: key, fingerprint: true, padding: 0x20)
        #expect(hexString(encoded) == hexString(vector))
    }

    @Test func longTermRequest() throws {
        // §2.4: the password is given before SASLprep; its prepared form is "TheMatrIX".
        #expect(try SASLprep.prepare(matrixPassword) == "TheMatrIX")
        let message = try STUNMessage(decoding: RFC5769.longTermRequest)
        #expect(message == withComputed(RFC5769.longTermMessage, [
            .messageIntegrity(Array(RFC5769.longTermRequest[96...]))
        ]))
        #expect(message.username == matrixUsername)
        #expect(message.realm == "example.org")
        #expect(message.nonce == "f//499k954d6OL34oL9FSTvy64sA")
        #expect(message.fingerprint == nil)

        let key = try STUNIntegrityKey.longTerm(
            username: matrixUsername, realm: "example.org", password: matrixPassword)
        #expect(key.bytes == MD5.hash(Array("\(matrixUsername):example.org:TheMatrIX".utf8)))
        #expect(try STUNIntegrity.verify(RFC5769.longTermRequest, key: key) == .hmacSHA1)
        let encoded = try RFC5769.longTermMessage.encode(key: key)
        #expect(hexString(encoded) == hexString(RFC5769.longTermRequest))
        // No FINGERPRINT here, so asking for one is an error, not a pass.
        expectError(.badFingerprint) { () throws(STUNError) in
            try STUNIntegrity.verifyFingerprint(RFC5769.longTermRequest)
        }
    }

    @Test(arguments: [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response, RFC5769.longTermRequest])
    func vectorsSurviveEverySplit(vector: [UInt8]) throws {
        let expected = try STUNMessage(decoding: vector)
        verifyDatagramDecoder(vector, expected: expected) { (b) throws(STUNError) in try STUNMessage(decoding: b) }
        verifyDatagramDecoder(vector, expected: try STUNMessageLayout(scanning: vector)) { (b) throws(STUNError) in
            try STUNMessageLayout(scanning: b)
        }
        let key = try STUNIntegrityKey.shortTerm(password: rfc5769Password)
        let longTermKey = try STUNIntegrityKey.longTerm(
            username: matrixUsername, realm: "example.org", password: matrixPassword)
        let verifyKey = vector == RFC5769.longTermRequest ? longTermKey : key
        verifyDatagramDecoder(vector, expected: STUNIntegrityAlgorithms.hmacSHA1) { (b) throws(STUNError) in
            try STUNIntegrity.verify(b, key: verifyKey)
        }
    }
}
