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
    struct Identity: Hashable, Sendable {
        let username: String
        let realm: String
        let password: String
        let algorithm: UInt16
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
