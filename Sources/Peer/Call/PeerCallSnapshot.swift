// What a call's summary is made of, copied out of the machine so it can cross threads.

import ICE
import Signaling
import ZoneCore

/// A call's milestones, path and counters at one moment.
public struct PeerCallSnapshot: Sendable {
    public var milestones: CallMilestones
    public var callState: CallState
    public var iceState: ConnectionState
    /// The selected pair's local and remote candidate kinds and addresses.
    public var localCandidate: String?
    public var remoteCandidate: String?
    /// `host`, `srflx`, `prflx` or `relay`: the local candidate's kind of the selected pair.
    public var pathKind: String?
    public var signaling: SignalingCounters
    public var media: CallMediaStats

    public init(_ call: PeerCall) {
        milestones = call.milestones
        callState = call.signaling.negotiator.state
        iceState = call.iceState
        if let pair = call.selectedPair {
            localCandidate = "\(pair.local.kind.rawValue) \(pair.local.address)"
            remoteCandidate = "\(pair.remote.kind.rawValue) \(pair.remote.address)"
            pathKind = pair.local.kind == .relay || pair.remote.kind == .relay ? "relay" : pair.local.kind.rawValue
        }
        signaling = call.signaling.counters
        media = call.media.stats
    }
}
