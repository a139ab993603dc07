// Encoding with trailing attributes: the bytes are those of the message with the attributes
// appended, MESSAGE-INTEGRITY and FINGERPRINT included (RFC 8489 §14.5, §14.7 cover them too).

import Testing
import ZoneCore
@testable import STUN

@Suite("Trailing attributes")
struct TrailingAttributesTests {
    let request = STUNMessage(method: .allocate, messageClass: .request, transactionID: rfc5769TransactionID,
                              attributes: [.requestedTransport(protocolNumber: STUNAttribute.transportUDP), .lifetime(seconds: 600)])
    let credentials: [STUNAttribute] = [.username("sim"), .realm("zonertc"), .nonce("6553f1e0-0123456789abcdef")]

    @Test func sameBytesAsAppendedAttributes() throws {
        let key = try STUNIntegrityKey.longTerm(username: "sim", realm: "zonertc", password: "pw")
        var appended = request
        appended.attributes += credentials
        for (key, fingerprint) in [(key, true), (key, false), (nil, true), (nil, false)] as [(STUNIntegrityKey?, Bool)] {
            let expected = try appended.encode(key: key, fingerprint: fingerprint)
            #expect(try request.encode(key: key, fingerprint: fingerprint, appending: credentials) == expected)
        }
        // Nothing trailing is the message alone.
        #expect(try request.encode(key: key, fingerprint: true, appending: [])
                == request.encode(key: key, fingerprint: true))
        // Computed attributes among the trailing ones are left out, as among the message's own.
        #expect(try request.encode(key: key, fingerprint: true, appending: credentials + [.fingerprint(0)])
                == appended.encode(key: key, fingerprint: true))
        // The receiver sees one message with every attribute, its integrity intact.
        let bytes = try request.encode(key: key, fingerprint: true, appending: credentials)
        try STUNIntegrity.verify(bytes, key: key)
        #expect(try STUNMessage(decoding: bytes).username == "sim")
    }
}
