// One leg of a peer's group call as the `RoomCall` holds it: the pair's `PeerCall` (noncopyable, so
// held in a box the room's list can carry), why the room ended it, and what it is summed up as.

import Signaling
import ZoneCore

/// A leg held by its room.
final class RoomCallLeg {
    let id: LegID
    var call: PeerCall
    /// The remote's member session (nil for a call-of-two peer).
    let memberSession: String?
    /// Why the room ended the leg; nil while it negotiates.
    var endReason: LegEndReason?
    /// The leg's signaling counters when the room ended it.
    var counters: SignalingCounters?

    init(id: LegID, call: consuming PeerCall, memberSession: String?) {
        self.id = id
        self.call = call
        self.memberSession = memberSession
    }

    var result: RoomLegResult {
        var snapshot = PeerCallSnapshot(call)
        if let counters { snapshot.signaling = counters }
        return RoomLegResult(id: id, memberSession: memberSession, endReason: endReason, ending: call.ending,
                             snapshot: snapshot)
    }
}

/// How one leg of a group call went: for the summary.
public struct RoomLegResult: Sendable {
    public var id: LegID
    /// The remote's member session (nil for a call-of-two peer).
    public var memberSession: String?
    /// Why the room ended the leg (nil: still up).
    public var endReason: LegEndReason?
    /// How the leg's call ended (nil: still up).
    public var ending: PeerCall.Ending?
    /// Milestones, path, media statistics, drops; the signaling counters the room kept for the leg.
    public var snapshot: PeerCallSnapshot
}
