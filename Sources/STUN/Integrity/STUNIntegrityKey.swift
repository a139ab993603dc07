// STUN integrity keys: RFC 8489 §9.1.1 (short-term), §9.2.2 (long-term, per password algorithm),
// RFC 5389 §15.4 (the classic long-term key), and USERHASH (RFC 8489 §14.4).
//
//   short-term:  key = SASLprep(password)
//   long-term:   key = MD5(username ":" realm ":" SASLprep(password))       (RFC 5389; algorithm MD5)
//                key = SHA-256(username ":" realm ":" SASLprep(password))   (RFC 8489; algorithm SHA-256)
//   USERHASH:    SHA-256(username ":" realm)
//
// RFC 8489 prepares passwords with the PRECIS OpaqueString profile and RFC 5389 with SASLprep;
// both leave ordinary passwords unchanged, and SASLprep is what RFC 5769's vector and coturn use.
// The username and realm go in as they appear in the USERNAME and REALM attributes.
//
// A key holds the HMAC-SHA1 state with the key already absorbed (RFC 2104 §4), so an agent that
// keeps one per credential pays only for the message blocks on every check.

import ZoneCore

/// A STUN integrity key with its keyed HMAC states, ready to sign and verify many messages.
public struct STUNIntegrityKey: Sendable {
    /// The key bytes (the prepared password, or the MD5/SHA-256 long-term digest).
    public let bytes: [UInt8]
    /// HMAC-SHA1 keyed with `bytes`, for MESSAGE-INTEGRITY; read in place.
    public var hmacSHA1: HMAC<SHA1> {
        _read { yield keyed.hmacSHA1 }
    }
    /// The keyed states, made once per key and shared by every copy of it (a key is held by every
    /// credential, transaction and allocation that signs with it).
    private let keyed: KeyedStates

    private final class KeyedStates: Sendable {
        let hmacSHA1: HMAC<SHA1>

        init(key: [UInt8]) { hmacSHA1 = HMAC<SHA1>(key: key) }
    }
    /// HMAC-SHA256 keyed with `bytes`, for MESSAGE-INTEGRITY-SHA256: keyed when asked, since
    /// ICE and our TURN client sign with HMAC-SHA1 only and most keys never need it.
    public var hmacSHA256: HMAC<SHA256> { HMAC<SHA256>(key: bytes) }

    /// A key from its raw bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
        keyed = KeyedStates(key: bytes)
    }

    /// The short-term credential key (ICE's, RFC 8445 §7.2.2): the SASLprep'd password.
    public static func shortTerm(password: String) throws(STUNError) -> STUNIntegrityKey {
        STUNIntegrityKey(bytes: Array(try SASLprep.prepare(password).utf8))
    }

    /// The long-term credential key (TURN's): a digest of username, realm and SASLprep'd password
    /// with the password algorithm's hash (MD5 unless PASSWORD-ALGORITHM chose SHA-256). Each
    /// machine keeps the keys it derived (the TURN server per user, the client per realm), so a
    /// key is derived once per machine and credentials.
    ///
    /// - Throws: `prohibitedCharacter` from SASLprep, or `invalidAttributeValue` for an
    ///   algorithm other than MD5 and SHA-256.
    public static func longTerm(
        username: String, realm: String, password: String, algorithm: STUNPasswordAlgorithm = .md5
    ) throws(STUNError) -> STUNIntegrityKey {
        let prepared = try SASLprep.prepare(password)
        // username ":" realm ":" password as bytes, written once into an array of the right size.
        var input: [UInt8] = []
        input.reserveCapacity(username.utf8.count + realm.utf8.count + prepared.utf8.count + 2)
        input.append(contentsOf: username.utf8)
        input.append(UInt8(ascii: ":"))
        input.append(contentsOf: realm.utf8)
        input.append(UInt8(ascii: ":"))
        input.append(contentsOf: prepared.utf8)
        switch algorithm.number {
        case STUNPasswordAlgorithm.md5.number:
            return STUNIntegrityKey(bytes: MD5.hash(input))
        case STUNPasswordAlgorithm.sha256.number:
            return STUNIntegrityKey(bytes: SHA256.hash(input))
        default:
            throw STUNError(.invalidAttributeValue, "password algorithm \(algorithm) is not supported")
        }
    }

    /// The USERHASH value for a username and realm (RFC 8489 §14.4): SHA-256(username ":" realm).
    public static func userhash(username: String, realm: String) -> [UInt8] {
        SHA256.hash(Array("\(username):\(realm)".utf8))
    }
}
