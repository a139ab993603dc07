// The client side of the long-term credential mechanism: RFC 8489 §9.2 (§9.2.3 forming a
// request, §9.2.5 receiving a response), as TURN uses it (RFC 8656 §7.1 and §7.2), in RFC 5389's
// classic form coturn speaks: MD5 key, MESSAGE-INTEGRITY (HMAC-SHA1), no PASSWORD-ALGORITHM.
//
// The first request goes without credentials; the server's 401 names the REALM and a NONCE; the
// request is sent again with USERNAME, REALM, NONCE and MESSAGE-INTEGRITY keyed with
// MD5(username ":" realm ":" SASLprep(password)). Later requests reuse realm and nonce until a
// 438 Stale Nonce hands over a new nonce.

import STUN
import ZoneCore

/// Username and password, and what the server told us: realm, nonce, and the key they make.
struct LongTermCredentials {
    let username: String
    let password: String
    private(set) var realm: String?
    private(set) var nonce: String?
    private(set) var key: STUNIntegrityKey?
    /// USERNAME, REALM and NONCE as every signed request carries them (RFC 8489 §9.2.3), made
    /// when a challenge changes them, not for every request.
    private var credentialAttributes: [STUNAttribute] = []

    init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// True once a challenge gave us a realm and nonce.
    var isReady: Bool { key != nil && nonce != nil }

    /// Takes the REALM and NONCE of a 401 or 438 response; the key is derived again only when
    /// the realm changed.
    ///
    /// - Throws: `prohibitedCharacter` when SASLprep refuses the password.
    mutating func accept(realm newRealm: String, nonce newNonce: String) throws(STUNError) {
        if key == nil || newRealm != realm {
            key = try STUNIntegrityKey.longTerm(username: username, realm: newRealm, password: password)
            realm = newRealm
        }
        nonce = newNonce
        credentialAttributes = [.username(username), .realm(newRealm), .nonce(newNonce)]
    }

    /// The request on the wire: with USERNAME, REALM, NONCE and MESSAGE-INTEGRITY once challenged,
    /// bare before; FINGERPRINT always. The second value tells whether it was signed.
    func encode(_ request: STUNMessage) throws(STUNError) -> (bytes: [UInt8], signed: Bool) {
        guard let key, nonce != nil else {
            return (try request.encode(fingerprint: true), false)
        }
        return (try request.encode(key: key, fingerprint: true, appending: credentialAttributes), true)
    }

    /// Whether a response may be believed (RFC 8489 §9.2.5): a response to a signed request must
    /// carry a MESSAGE-INTEGRITY that matches our key, except the 401 and 438 challenges, which
    /// the server cannot sign; an unsigned request's response needs nothing.
    /// `layout` is the one scanned from `bytes` to decode `response`.
    func isAuthentic(_ response: STUNMessage, bytes: [UInt8], layout: STUNMessageLayout,
                     requestWasSigned: Bool) -> Bool {
        let hasIntegrity = response.contains(.messageIntegrity) || response.contains(.messageIntegritySHA256)
        if !hasIntegrity {
            guard requestWasSigned else { return true }
            // Errors from servers that do not sign them are accepted: the worst a forger can do
            // is fail a request the retransmission timer would fail anyway.
            return response.messageClass == .errorResponse
        }
        guard let key else { return !requestWasSigned }
        return (try? STUNIntegrity.verify(bytes, layout: layout, key: key)) != nil
    }
}
