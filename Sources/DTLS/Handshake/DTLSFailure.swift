#if WebRTC
// Why a DTLS association ended without keys. Each case is something a person can act on: the
// peer is not who the signaling said (fingerprint), it never answered (timeout), or the two
// stacks disagreed (OpenSSL's reason, e.g. "no shared cipher" or an alert the peer sent).

import SDP

/// Why a `DTLSTransport` failed.
public enum DTLSFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The remote's certificate does not hash to the fingerprint the signaling carried.
    case fingerprintMismatch(expected: DTLSFingerprint, actual: DTLSFingerprint)
    /// The signaled fingerprint uses a hash function we cannot or must not check (RFC 8122 §5: not
    /// MD2 or MD5).
    case unusableFingerprint(hashFunction: String)
    /// The handshake did not complete within the bound (no answer, or every flight lost).
    case handshakeTimedOut(after: Duration)
    /// The handshake completed without an SRTP profile both sides support (RFC 5764 §4.1.1).
    case noSRTPProfile
    /// OpenSSL rejected the exchange; its reason.
    case protocolError(String)

    public var description: String {
        switch self {
        case .fingerprintMismatch(let expected, let actual):
            "DTLS: the remote certificate's fingerprint \(actual) is not the signaled \(expected)"
        case .unusableFingerprint(let hashFunction):
            "DTLS: the signaled fingerprint's hash function '\(hashFunction.prefix(40))' cannot be checked"
        case .handshakeTimedOut(let after):
            "DTLS: no handshake within \(Int(exactly: after.milliseconds.rounded()) ?? Int.max) ms"
        case .noSRTPProfile:
            "DTLS: the remote negotiated no SRTP profile we support"
        case .protocolError(let reason):
            "DTLS: \(reason.isEmpty ? "handshake failed" : reason)"
        }
    }
}
#endif
