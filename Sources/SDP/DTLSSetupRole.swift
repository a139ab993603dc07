// The DTLS connection role, `a=setup`: RFC 4145 §4, with RFC 8842 §5 (DTLS over ICE) and
// RFC 8829 §5.2.1 / §5.3.1 (the offer says actpass, the answer picks active or passive).

/// Which side starts the DTLS handshake.
public enum DTLSSetupRole: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Sends the ClientHello.
    case active
    /// Waits for the ClientHello.
    case passive
    /// Either; the answerer decides. JSEP offers always say this.
    case activePassive = "actpass"
    /// No connection for now (RFC 4145); not used with DTLS over ICE.
    case holdConnection = "holdconn"

    /// The role an answerer takes when the offer says `self`, preferring `preferred` when the
    /// offer leaves the choice (actpass); nil when the offer allows no connection (holdconn).
    ///
    /// JSEP §5.3.1 says an answerer SHOULD choose active when it may choose; `preferred` must
    /// then be active or passive, anything else counts as active.
    public func answerRole(preferring preferred: DTLSSetupRole = .active) -> DTLSSetupRole? {
        switch self {
        case .activePassive: preferred == .passive ? .passive : .active
        case .active: .passive
        case .passive: .active
        case .holdConnection: nil
        }
    }

    public var description: String { rawValue }
}
