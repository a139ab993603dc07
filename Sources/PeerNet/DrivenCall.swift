// What `CallRunner` needs of the call it drives: a call of two (`PeerCall`) or a room's group call
// (`RoomCall`). Both are sans-I/O machines with the same shape of inputs and outputs; this names the
// few the driver feeds, so one driver moves sockets, store requests, pushes and time for either.

import ICE
import Peer
import RecordStore
import Signaling
import ZoneCore

/// An output a driver carries out.
public enum DriverOutput<Origin: Sendable, Event: Sendable>: Sendable {
    /// Make the request; hand the outcome back with `storeReplied(origin, …)`.
    case store(StoreRequest, origin: Origin)
    /// Send `bytes` from the local socket bound to `from` to `to`.
    case transmit([UInt8], from: Endpoint, to: Endpoint)
    /// Tell the user.
    case event(Event)
}

/// A call `CallRunner` can drive.
public protocol DrivenCall: ~Copyable {
    /// What a store request belongs to.
    associatedtype Origin: Sendable
    /// What the call reports.
    associatedtype Event: Sendable
    /// What the call is summed up as, once run.
    associatedtype Snapshot: Sendable

    mutating func start(now: Instant)
    mutating func hangUp(now: Instant)
    mutating func notify(_ note: PushNotification, now: Instant)
    mutating func storeReplied(_ origin: Origin, _ outcome: StoreOutcome, now: Instant)
    mutating func receive(_ bytes: [UInt8], from: Endpoint, to: Endpoint, now: Instant)
    mutating func timer(now: Instant)
    mutating func nextDriverOutput() -> DriverOutput<Origin, Event>?
    var nextDeadline: Instant? { get }
    /// Whether it hung up (its goodbye may still be going out).
    var hasHungUp: Bool { get }
    /// Whether it hung up and drained everything.
    var isClosed: Bool { get }
    /// How it ended, once it did.
    var ending: PeerCall.Ending? { get }
    func snapshot() -> Snapshot
    /// The log line an event deserves, if any.
    static func logLine(_ event: Event) -> (LogLevel, String)?
}

extension PeerCall: DrivenCall {
    public mutating func start(now: Instant) { handle(.start, now: now) }
    public mutating func hangUp(now: Instant) { handle(.hangUp, now: now) }
    public mutating func notify(_ note: PushNotification, now: Instant) {
        handle(.signaling(.notification(note)), now: now)
    }
    public mutating func storeReplied(_ origin: CallSignaling.Origin, _ outcome: StoreOutcome, now: Instant) {
        handle(.signaling(.reply(origin, outcome)), now: now)
    }
    public mutating func receive(_ bytes: [UInt8], from: Endpoint, to: Endpoint, now: Instant) {
        handle(.datagram(bytes, from: from, to: to), now: now)
    }
    public mutating func timer(now: Instant) { handle(.timer, now: now) }
    public mutating func nextDriverOutput() -> DriverOutput<CallSignaling.Origin, PeerCall.Event>? {
        switch pollOutput() {
        case .store(let request, let origin): .store(request, origin: origin)
        case .transmit(let bytes, let from, let to): .transmit(bytes, from: from, to: to)
        case .event(let event): .event(event)
        case nil: nil
        }
    }
    public func snapshot() -> PeerCallSnapshot { PeerCallSnapshot(self) }

    public static func logLine(_ event: PeerCall.Event) -> (LogLevel, String)? {
        switch event {
        case .rejectedRecord(let why): (.warning, why)
        case .remoteHungUp(let why): (.notice, why)
        case .sendFailed(let why): (.notice, "media not sent: \(why)")
        case .selectedPair(let pair): (.info, "selected pair \(pair)")
        case .relay(let what): (.debug, "TURN \(what)")
        case .iceState(let state): (.debug, "ICE \(state)")
        case .callState(let state): (.debug, "call \(state)")
        case .ended(.failed(let why)): (.notice, "call failed: \(why)")
        default: nil
        }
    }
}

extension RoomCall: DrivenCall {
    public mutating func start(now: Instant) { handle(.join, now: now) }
    public mutating func hangUp(now: Instant) { handle(.hangUp, now: now) }
    public mutating func notify(_ note: PushNotification, now: Instant) {
        handle(.signaling(.notification(note)), now: now)
    }
    public mutating func storeReplied(_ origin: RoomSignaling.Origin, _ outcome: StoreOutcome, now: Instant) {
        handle(.signaling(.reply(origin, outcome)), now: now)
    }
    public mutating func receive(_ bytes: [UInt8], from: Endpoint, to: Endpoint, now: Instant) {
        handle(.datagram(bytes, from: from, to: to), now: now)
    }
    public mutating func timer(now: Instant) { handle(.timer, now: now) }
    public mutating func nextDriverOutput() -> DriverOutput<RoomSignaling.Origin, RoomCall.Event>? {
        switch pollOutput() {
        case .store(let request, let origin): .store(request, origin: origin)
        case .transmit(let bytes, let from, let to): .transmit(bytes, from: from, to: to)
        case .event(let event): .event(event)
        case nil: nil
        }
    }
    public func snapshot() -> RoomCallSnapshot { RoomCallSnapshot(self) }

    public static func logLine(_ event: RoomCall.Event) -> (LogLevel, String)? {
        switch event {
        case .leg(let id, let legEvent):
            PeerCall.logLine(legEvent).map { ($0.0, "\(id.remote): \($0.1)") }
        case .legStarted(let id, caller: false): (.info, "leg with \(id.remote) started")
        case .legStarted(let id, caller: true):
            (.notice, "leg with \(id.remote) started on its offer: \(id.remote) has no presence record in the room "
                + "(a call-of-two peer, or a participant not in the group call); the offer proves presence")
        case .legEnded(let id, let reason): (.notice, "leg with \(id.remote) ended: \(reason.sentence(remote: id.remote))")
        case .noRelaySocket(let id):
            (.warning, "\(id.remote): no relay socket free, the leg's TURN allocations share the host socket's")
        case .beyondLimit(let user, let rank, let limit):
            (.notice, "\(user) is member \(rank) of at most \(limit): no leg with it")
        case .rejectedRecord(let remote, let why): (.warning, remote.map { "\($0): \(why)" } ?? why)
        case .zoneUnavailable(let why): (.warning, "the room's zone is unavailable: \(why)")
        case .left(let reason): (.notice, "left the room: \(reason)")
        case .joined, .roster: nil
        }
    }
}
