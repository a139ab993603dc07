// The long-term key cache (RFC 8489 §9.2.2 keys, derived once per identity): a cached key is the
// key derived afresh, and any part of the identity that differs gives another key.

import Testing
import ZoneCore
@testable import STUN

@Suite("Long-term key cache")
struct LongTermKeyCacheTests {
    @Test func cachedKeyEqualsDerivedKey() throws {
        let cache = LongTermKeyCache(capacity: 8)
        for algorithm in [STUNPasswordAlgorithm.md5, .sha256] {
            let derived = try STUNIntegrityKey.derivingLongTerm(username: "sim", realm: "zonertc",
                                                                password: "pw", algorithm: algorithm)
            let first = try cache.key(username: "sim", realm: "zonertc", password: "pw", algorithm: algorithm)
            let again = try cache.key(username: "sim", realm: "zonertc", password: "pw", algorithm: algorithm)
            #expect(first.bytes == derived.bytes && again.bytes == derived.bytes)
            // The keyed HMAC states agree too: the cached key signs as the derived one does.
            let text: [UInt8] = Array("a message".utf8)
            #expect(again.hmacSHA1.authenticationCode(for: text) == derived.hmacSHA1.authenticationCode(for: text))
        }
        #expect(cache.count == 2)
        // What `longTerm` returns is the derived key as well.
        #expect(try STUNIntegrityKey.longTerm(username: "sim", realm: "zonertc", password: "pw").bytes
                == MD5.hash(Array("sim:zonertc:pw".utf8)))
    }

    @Test func everyPartOfTheIdentityCounts() throws {
        let cache = LongTermKeyCache(capacity: 8)
        let base = try cache.key(username: "alice", realm: "r", password: "secret", algorithm: .md5)
        let otherPassword = try cache.key(username: "alice", realm: "r", password: "secreT", algorithm: .md5)
        let otherUser = try cache.key(username: "bob", realm: "r", password: "secret", algorithm: .md5)
        let otherRealm = try cache.key(username: "alice", realm: "R", password: "secret", algorithm: .md5)
        let otherAlgorithm = try cache.key(username: "alice", realm: "r", password: "secret", algorithm: .sha256)
        let keys = [base, otherPassword, otherUser, otherRealm, otherAlgorithm].map(\.bytes)
        #expect(Set(keys).count == keys.count)
        #expect(otherPassword.bytes == MD5.hash(Array("alice:r:secreT".utf8)))
        #expect(otherUser.bytes == MD5.hash(Array("bob:r:secret".utf8)))
        // Where the separators fall is part of the identity: "a:b" + "c" is not "a" + "b:c".
        let left = try cache.key(username: "a:b", realm: "c", password: "p", algorithm: .md5)
        let right = try cache.key(username: "a", realm: "b:c", password: "p", algorithm: .md5)
        #expect(left.bytes == right.bytes)  // the RFC's digest input is the same text…
        #expect(cache.count == 7)  // …but each identity has its own entry
    }

    @Test func canonicallyEquivalentTextsAreDifferentIdentities() throws {
        // Equal as Swift strings, different as bytes: the username goes into the digest as bytes,
        // so each spelling has its own key, and the cache must not hand one the other's.
        let precomposed = "jos\u{E9}", decomposed = "jose\u{301}"
        #expect(precomposed == decomposed)
        let cache = LongTermKeyCache(capacity: 8)
        let first = try cache.key(username: precomposed, realm: "r", password: "p", algorithm: .md5)
        let second = try cache.key(username: decomposed, realm: "r", password: "p", algorithm: .md5)
        #expect(first.bytes == MD5.hash(Array("\(precomposed):r:p".utf8)))
        #expect(second.bytes == MD5.hash(Array("\(decomposed):r:p".utf8)))
        #expect(first.bytes != second.bytes)
        let realmFirst = try cache.key(username: "u", realm: precomposed, password: "p", algorithm: .md5)
        let realmSecond = try cache.key(username: "u", realm: decomposed, password: "p", algorithm: .md5)
        #expect(realmFirst.bytes != realmSecond.bytes)
        #expect(cache.count == 4)
    }

    @Test func errorsAreNotCached() {
        let cache = LongTermKeyCache(capacity: 8)
        for _ in 0..<2 {
            expectError(.invalidAttributeValue) { () throws(STUNError) in
                _ = try cache.key(username: "u", realm: "r", password: "p", algorithm: STUNPasswordAlgorithm(number: 3))
            }
            expectError(.prohibitedCharacter) { () throws(STUNError) in
                _ = try cache.key(username: "u", realm: "r", password: "a\u{0007}", algorithm: .md5)
            }
        }
        #expect(cache.count == 0)
    }

    @Test func boundedByItsCapacity() throws {
        // Usernames come from the network: however many arrive, the cache keeps at most its capacity.
        let cache = LongTermKeyCache(capacity: 4)
        for i in 0..<10 {
            let key = try cache.key(username: "user\(i)", realm: "r", password: "p", algorithm: .md5)
            #expect(key.bytes == MD5.hash(Array("user\(i):r:p".utf8)))
            #expect(cache.count <= 4)
        }
    }
}
