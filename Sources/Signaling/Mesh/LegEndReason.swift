// Why a leg of a room's group call ended, and why this peer left the room (docs/PROTOCOL.md §11.4).
import RecordStore
import ZoneCore

/// Why a leg ended.
public enum LegEndReason: Hashable, Sendable, CustomStringConvertible {
    /// The remote member's presence record was deleted: it left, or the room's owner removed it.
    case remoteLeft
    /// The remote said goodbye on the leg's own path (DTLS close_notify, or the plain RTCP BYE of
    /// docs/PROTOCOL.md §11.4), checked by the leg: it left.
    case remoteSaidGoodbye
    /// The remote member's presence expired (it crashed or lost the store) and the leg was not, or no
    /// longer, connected.
    case remoteExpired
    /// The remote member joined again with a new member session; a new leg follows.
    case remoteRejoined
    /// The remote's description of the active epoch left the zone: its goodbye (docs/PROTOCOL.md §7).
    case remoteHungUp(epoch: CallEpoch, EnvelopeType)
    /// No offer came and ours was not answered, or ours was not answered, within the bound.
    case unanswered(after: Duration)
    /// The remote is ranked beyond the room's limit.
    case beyondLimit(rank: Int, limit: Int)
    /// This peer left the room.
    case localLeave
    /// The leg's call ended by itself (its media timed out, its ICE restarts ran out).
    case callEnded(String)

    /// The reason as a sentence about the leg with `remote` ("bob left the room …", "we left the room").
    public func sentence(remote: String) -> String {
        switch self {
        case .localLeave: description
        case .beyondLimit: "\(remote) is \(description)"
        default: "\(remote) \(description)"
        }
    }

    public var description: String {
        switch self {
        case .remoteLeft: return "left the room (its presence record was deleted)"
        case .remoteSaidGoodbye: return "left the room (its goodbye on the media path: DTLS close_notify or RTCP BYE)"
        case .remoteExpired: return "its presence expired (crashed or lost the store)"
        case .remoteRejoined: return "joined again with a new member session"
        case .remoteHungUp(let epoch, let type): return "hung up (its \(type.rawValue) of epoch \(epoch) was deleted)"
        case .unanswered(let after): return "did not answer within \(after)"
        case .beyondLimit(let rank, let limit): return "ranked \(rank) of at most \(limit) members"
        case .localLeave: return "we left the room"
        case .callEnded(let detail): return "ended the call with us: \(detail)"
        }
    }
}

/// Why this peer left the room.
public enum LeaveReason: Hashable, Sendable, CustomStringConvertible {
    /// The user hung up.
    case requested
    /// More members are present than the room allows and this peer ranked beyond the limit.
    case roomFull(rank: Int, limit: Int)
    /// Our presence record was deleted by someone else (the room's owner removed us).
    case removed
    /// Our presence record could not be saved.
    indirect case presenceFailed(StoreError)
    /// The zone was deleted or access to it lost.
    indirect case zoneUnavailable(StoreError)
    /// No other member joined (no leg started) within the bound after we joined.
    case alone(after: Duration)

    public var description: String {
        switch self {
        case .requested: return "hung up"
        case .roomFull(let rank, let limit):
            return "the room is full: we joined as member \(rank) and at most \(limit) may be in the call"
        case .removed: return "removed from the call (our presence record was deleted by someone else)"
        case .presenceFailed(let error): return "could not save our presence record: \(error)"
        case .zoneUnavailable(let error): return "the room's zone is unavailable: \(error)"
        case .alone(let after): return "no other member joined the call within \(after)"
        }
    }
}
