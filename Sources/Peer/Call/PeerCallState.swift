// Where a call is, as one value: each state carries exactly what is known there (the epoch being
// negotiated, the pair media flows on, the deadline the call is held to), so no flag or optional
// elsewhere in `PeerCall` says it a second time. The deadlines are the call's own decisions
// (`CallLifetime`), taken the same way in the real runner and in the simulator.

import ICE
import Signaling
import ZoneCore

/// The course of one peer's call.
public enum PeerCallState: Sendable, Equatable {
    /// Made, not started.
    case idle
    /// Started, no epoch yet: the session record is being ensured, the first offer made or
    /// awaited. `connectBy`: fail unless a pair is selected by then.
    case joining(connectBy: Instant?)
    /// Negotiating `epoch` (descriptions and candidates through the store, ICE checks); no pair
    /// was ever selected. `connectBy` as in `joining`.
    case negotiating(epoch: CallEpoch, connectBy: Instant?)
    /// `pair` of `epoch` is selected: media flows on it. `holdUntil`: hang up then
    /// (`CallLifetime.holdAfterConnect`). A renegotiation keeps the call here until its own
    /// epoch selects a pair. Boxed: a pair is some 200 bytes, and the state was copied whole each
    /// time it was matched or asked for its deadline (five or more times an input).
    indirect case connected(epoch: CallEpoch, pair: CandidatePair, holdUntil: Instant?)
    /// The path of a connected call failed (every pair failed, or consent expired, RFC 7675
    /// §5.1): ICE restart number `attempt` runs in a new epoch, which must select a pair by
    /// `reconnectBy` or the call ends `remote unreachable`.
    case restarting(attempt: Int, reconnectBy: Instant, holdUntil: Instant?)
    /// Hung up for `ending`: the goodbye is in the store requests the call asked for, and the
    /// transport is closing (TURN deallocations).
    case hangingUp(PeerCall.Ending)
    /// Hung up for `ending`, and the transport has nothing left to do; only the store requests
    /// already asked for may still be running in the driver.
    case ended(PeerCall.Ending)

    /// How the call ended, once it has hung up.
    public var ending: PeerCall.Ending? {
        switch self {
        case .hangingUp(let ending), .ended(let ending): ending
        case .idle, .joining, .negotiating, .connected, .restarting: nil
        }
    }

    /// The instant the call itself must act at (connect, hold or reconnect deadline), if any.
    var deadline: Instant? {
        switch self {
        case .joining(let connectBy), .negotiating(_, let connectBy): connectBy
        case .connected(_, _, let holdUntil): holdUntil
        case .restarting(_, let reconnectBy, let holdUntil): .earliest(reconnectBy, holdUntil)
        case .idle, .hangingUp, .ended: nil
        }
    }
}

extension PeerCall {
    /// How a call ended.
    public enum Ending: Sendable, Equatable {
        /// Hung up as planned: by the user, after its media, or after its hold time.
        case completed
        /// Hung up because it could not go on; the reason is for the user.
        case failed(String)
    }
}
