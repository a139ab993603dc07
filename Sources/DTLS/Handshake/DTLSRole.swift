#if WebRTC
// Who starts the DTLS handshake. RFC 5763 §5: the endpoint whose SDP says `a=setup:active` is the
// DTLS client; `passive` is the server; `actpass` offers to be either (the answer decides).

/// Which side of the DTLS handshake this endpoint plays.
public enum DTLSRole: String, Hashable, Sendable {
    /// Sends the ClientHello (`a=setup:active`).
    case client
    /// Waits for it (`a=setup:passive`).
    case server
}
#endif
