// Long-term keys kept once derived (RFC 8489 §9.2.2).
//
// A long-term key is a pure function of the credentials: MD5 or SHA-256 of
// username ":" realm ":" SASLprep(password), with its keyed HMAC states (RFC 2104 §4). Every TURN
// client and server derives it for the same few credentials over and over: a client per
// allocation (RFC 8656 §7.1), a server per user it authenticates, and the simulator makes both
// afresh for every call. Deriving costs the string, the digest and the two HMAC blocks; looking
// the key up costs one hash of the identity.
//
// The cache is keyed by the whole identity — username, realm, password and password algorithm —
// so a key is only ever handed to the very credentials it was derived from; one user's key can
// never answer for another user, realm or password. Errors (a password SASLprep refuses, an
// unknown algorithm) are not cached: they are thrown again each time.
//
// Usernames reach a server from the network (a TURN REST server derives a key for every
// well-formed "expiry:user" it is sent), so the cache is bounded: when it is full it starts over
// empty. Forgetting costs only a derivation; the keys themselves never change.

import Synchronization

/// Long-term integrity keys by the credentials they were derived from, bounded and shared by
/// every thread.
public final class LongTermKeyCache: Sendable {
    /// Everything a long-term key depends on (RFC 8489 §9.2.2), and so everything it is found by.
    ///
    /// Compared and hashed by UTF-8 bytes, not as `String`s: `String` equality is canonical
    /// equivalence, so "é" and "e" + U+0301 are equal strings, yet the username and realm go into
    /// the digest as the bytes they are, and make different keys.
    struct Identity: Hashable, Sendable {
        let username: String
        let realm: String
        let password: String
        let algorithm: UInt16

        static func == (a: Identity, b: Identity) -> Bool {
            a.algorithm == b.algorithm && sameBytes(a.username, b.username) && sameBytes(a.realm, b.realm)
                && sameBytes(a.password, b.password)
        }

        /// Whether two texts are the same UTF-8 bytes, read in place (a native string's
        /// `withUTF8` copies nothing; walking `utf8` views index by index cost thousands).
        private static func sameBytes(_ a: String, _ b: String) -> Bool {
            var a = a
            var b = b
            return a.withUTF8 { x in
                b.withUTF8 { y in
                    guard x.count == y.count else { return false }
                    for i in 0..<x.count where x[i] != y[i] { return false }
                    return true
                }
            }
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(algorithm)
            Identity.combine(username, into: &hasher)
            Identity.combine(realm, into: &hasher)
            Identity.combine(password, into: &hasher)
        }

        /// The length, so that where one text ends and the next begins is hashed too, then the bytes.
        private static func combine(_ text: String, into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { bytes in  // in place for a native string
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            }
        }
    }

    /// The cache `STUNIntegrityKey.longTerm` uses.
    public static let shared = LongTermKeyCache(capacity: 256)

    /// The most keys kept; the next one empties the cache first.
    public let capacity: Int
    private let keys: Mutex<[Identity: STUNIntegrityKey]>

    public init(capacity: Int) {
        precondition(capacity > 0, "LongTermKeyCache: a capacity of at least one key")
        self.capacity = capacity
        keys = Mutex([:])
    }

    /// How many keys are kept now.
    public var count: Int { keys.withLock { $0.count } }

    /// The long-term key of these credentials: the one derived before, or derived now and kept.
    ///
    /// - Throws: what `STUNIntegrityKey.derivingLongTerm` throws (nothing is kept then).
    public func key(
        username: String, realm: String, password: String, algorithm: STUNPasswordAlgorithm
    ) throws(STUNError) -> STUNIntegrityKey {
        let identity = Identity(username: username, realm: realm, password: password, algorithm: algorithm.number)
        if let known = keys.withLock({ $0[identity] }) { return known }
        // Derived outside the lock: another thread deriving the same key at once only repeats the work.
        let derived = try STUNIntegrityKey.derivingLongTerm(
            username: username, realm: realm, password: password, algorithm: algorithm)
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[identity] = derived
        }
        return derived
    }
}
