// ICE credentials: RFC 8445 §5.3 (ufrag at least 4 ice-chars, password at least 22), and the
// short-term key that signs and checks every message under them (RFC 8445 §7.2.2).

import STUN
import ZoneCore

/// A username fragment and password: one side of one ICE generation.
public struct Credentials: Hashable, Sendable {
    /// The username fragment (ice-ufrag).
    public var ufrag: String
    /// The password (ice-pwd).
    public var password: String

    public init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
    }

    /// Fresh random credentials: an 8-character ufrag and a 24-character password drawn from the
    /// ice-char alphabet (RFC 8839 §5.4) with `random`.
    public static func random<G: RandomNumberGenerator>(using random: inout G) -> Credentials {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        func draw(_ n: Int) -> String {
            String((0..<n).map { _ in alphabet[Int(random.next() & 63)] })
        }
        return Credentials(ufrag: draw(8), password: draw(24))
    }
}

/// Credentials with their short-term key computed once.
struct KeyedCredentials {
    let credentials: Credentials
    let key: STUNIntegrityKey

    init(_ credentials: Credentials) throws(ICEError) {
        self.credentials = credentials
        do {
            key = try STUNIntegrityKey.shortTerm(password: credentials.password)
        } catch {
            throw ICEError(.invalidCredentials, "the password cannot be prepared: \(error)")
        }
    }
}
