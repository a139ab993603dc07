// Long-term keys (RFC 8489 §9.2.2): the digest of username ":" realm ":" SASLprep(password) as
// bytes, and every part of the credentials that differs gives another key.

import Testing
import ZoneCore
@testable import STUN

@Suite("Long-term keys")
struct LongTermKeyTests {
    @Test func theKeyIsTheDigestOfTheCredentialsText() throws {
        for (algorithm, digest) in [(STUNPasswordAlgorithm.md5, MD5.hash(Array("sim:zonertc:pw".utf8))),
                                    (.sha256, SHA256.hash(Array("sim:zonertc:pw".utf8)))] {
            let key = try STUNIntegrityKey.longTerm(username: "sim", realm: "zonertc", password: "pw",
                                                    algorithm: algorithm)
            #expect(key.bytes == digest)
            // The keyed HMAC states agree with a key made from the same bytes.
            let text: [UInt8] = Array("a message".utf8)
            #expect(key.hmacSHA1.authenticationCode(for: text)
                    == STUNIntegrityKey(bytes: digest).hmacSHA1.authenticationCode(for: text))
        }
    }

    @Test func everyPartOfTheCredentialsCounts() throws {
        func key(_ user: String, _ realm: String, _ password: String,
                 _ algorithm: STUNPasswordAlgorithm = .md5) throws -> [UInt8] {
            try STUNIntegrityKey.longTerm(username: user, realm: realm, password: password, algorithm: algorithm).bytes
        }
        let keys = [try key("alice", "r", "secret"), try key("alice", "r", "secreT"), try key("bob", "r", "secret"),
                    try key("alice", "R", "secret"), try key("alice", "r", "secret", .sha256)]
        #expect(Set(keys).count == keys.count)
        #expect(keys[1] == MD5.hash(Array("alice:r:secreT".utf8)))
        #expect(keys[2] == MD5.hash(Array("bob:r:secret".utf8)))
        // The RFC's digest input is the joined text: "a:b" + "c" makes the same key as "a" + "b:c".
        #expect(try key("a:b", "c", "p") == key("a", "b:c", "p"))
    }

    @Test func canonicallyEquivalentTextsGiveDifferentKeys() throws {
        // Equal as Swift strings, different as bytes: the names go into the digest as bytes.
        let precomposed = "jos\u{E9}", decomposed = "jose\u{301}"
        #expect(precomposed == decomposed)
        let first = try STUNIntegrityKey.longTerm(username: precomposed, realm: "r", password: "p")
        let second = try STUNIntegrityKey.longTerm(username: decomposed, realm: "r", password: "p")
        #expect(first.bytes == MD5.hash(Array("\(precomposed):r:p".utf8)))
        #expect(second.bytes == MD5.hash(Array("\(decomposed):r:p".utf8)))
        #expect(first.bytes != second.bytes)
        let realmFirst = try STUNIntegrityKey.longTerm(username: "u", realm: precomposed, password: "p")
        let realmSecond = try STUNIntegrityKey.longTerm(username: "u", realm: decomposed, password: "p")
        #expect(realmFirst.bytes != realmSecond.bytes)
    }

    @Test func refusedCredentialsThrowEveryTime() {
        for _ in 0..<2 {
            expectError(.invalidAttributeValue) { () throws(STUNError) in
                _ = try STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p",
                                                  algorithm: STUNPasswordAlgorithm(number: 3))
            }
            expectError(.prohibitedCharacter) { () throws(STUNError) in
                _ = try STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "a\u{0007}")
            }
        }
    }
}
