import SDP

// What the negotiator asks of the ICE agent and media (RFC 8445 for ICE, RFC 8838 for trickle,
// RFC 8829 for the descriptions), and what it hears back. The agent is another sans-I/O
// machine; the peer (or a test's fake) connects the two.

/// An instruction for the ICE agent, always about one epoch.
public enum ICECommand: Hashable, Sendable {
    /// Begin a new ICE generation for `epoch` with fresh credentials: an ICE restart
    /// (RFC 8445 §9), or the start of ICE for a call's first epoch. Gathering begins.
    case restartICE(epoch: CallEpoch, credentials: ICECredentials)
    /// Our description of `epoch` (offer or answer) is set. Indirect, as is the remote one: a
    /// description is large, and most actions of the call's machines are small.
    indirect case setLocalDescription(epoch: CallEpoch, SessionDescription)
    /// Apply the remote peer's description of `epoch`.
    indirect case applyRemoteDescription(epoch: CallEpoch, SessionDescription)
    /// Add the remote peer's trickled candidates of `epoch` (RFC 8838 §11); `endOfCandidates`
    /// says no more will come for it (§13).
    case addRemoteCandidates(epoch: CallEpoch, [ICECandidate], endOfCandidates: Bool)
    /// The call is over: stop ICE.
    case close
}

/// What the ICE agent reports to the negotiator.
public enum ICEEvent: Hashable, Sendable {
    /// Local candidates of `epoch` were gathered: trickle them. `endOfCandidates` when gathering
    /// ended with them (RFC 8838 §13): one chunk then carries both, not a second for the end alone.
    case localCandidates(epoch: CallEpoch, [ICECandidate], endOfCandidates: Bool = false)
    /// Gathering for `epoch` is complete: send end-of-candidates.
    case gatheringComplete(epoch: CallEpoch)
    /// A pair of `epoch` was nominated: the call is connected.
    case connected(epoch: CallEpoch)
    /// Every pair of `epoch` failed.
    case failed(epoch: CallEpoch)
}
