// Where a call stands, as the negotiator reports it.

/// The state of a call between two peers.
public enum CallState: Hashable, Sendable, CustomStringConvertible {
    /// Not started.
    case idle
    /// Started; reading the session record before the first offer.
    case preparing
    /// Waiting for the offer creator's offer (or a remote restart).
    case waitingForOffer
    /// Our offer of this epoch is out; no answer yet.
    case offering(CallEpoch)
    /// Both descriptions of this epoch are set; ICE is checking.
    case connecting(CallEpoch)
    /// ICE connected on this epoch.
    case connected(CallEpoch)
    /// Hung up.
    case ended

    /// The epoch the state is about, if any.
    public var epoch: CallEpoch? {
        switch self {
        case .offering(let e), .connecting(let e), .connected(let e): return e
        case .idle, .preparing, .waitingForOffer, .ended: return nil
        }
    }

    /// True while an offer/answer exchange is under way (sync polls faster then).
    public var isNegotiating: Bool {
        switch self {
        case .preparing, .waitingForOffer, .offering, .connecting: return true
        case .idle, .connected, .ended: return false
        }
    }

    public var description: String {
        switch self {
        case .idle: return "idle"
        case .preparing: return "preparing"
        case .waitingForOffer: return "waiting for offer"
        case .offering(let e): return "offering \(e)"
        case .connecting(let e): return "connecting \(e)"
        case .connected(let e): return "connected \(e)"
        case .ended: return "ended"
        }
    }
}
