// One peer's group call in a room (docs/PROTOCOL.md §11), sans-I/O: the room's signaling
// (`RoomSignaling`: presence, the offer rule, one change-sync for every leg routing records by session
// key, batched leg requests) composed with one `PeerCall` per remote member — that pair's ICE
// transports, media protection and media, the same machine a call of two runs, its negotiator being
// the room's. Nothing here decides a negotiation: the room's signaling decides the legs, each leg its
// transport and media; this only routes between them:
//   - the room's leg actions (ICE commands, call states) go to the leg of that remote, and what a
//     leg's transports report goes back to the room (`PeerCall+RoomLeg.swift`);
//   - a leg the room ended hangs up and is drained like any call, then kept as a `RoomLegResult`;
//   - datagrams on the shared sockets go to the leg that sent to that address, or, for a check from
//     an address no leg has sent to, the leg whose local username fragment the check names
//     (`RoomDatagramRoute`); datagrams on a relay socket go to the leg holding it: each epoch of a leg
//     allocates on a TURN server from a socket of its own (`RoomCallConfiguration.relaySockets`), lent
//     when the leg's negotiator restarts ICE and free again once that epoch's transport is drained.
// Noncopyable: it owns its legs, which own their transports.

import ICE
import Media
import RecordStore
import Signaling
import ZoneCore

/// One peer's side of a room's group call.
public struct RoomCall: ~Copyable {
    /// Something that happened to the group call.
    public enum Input: Sendable {
        /// Join the room's call: save our presence, start fetching; legs start as members appear.
        case join
        /// A store reply or push notification for the room's signaling.
        case signaling(RoomSignaling.Event)
        /// A datagram arrived from `from` on the local socket bound to `to`.
        case datagram([UInt8], from: Endpoint, to: Endpoint)
        /// `nextDeadline` was reached.
        case timer
        /// The user leaves the call: every leg says goodbye, our records go.
        case hangUp
    }

    /// Something the group call wants done or reported.
    public enum Output: Sendable {
        /// Carry out a store request and feed back `.signaling(.reply(origin, outcome))`.
        indirect case store(StoreRequest, origin: RoomSignaling.Origin)
        /// Send `bytes` from the local socket bound to `from` to `to`.
        case transmit([UInt8], from: Endpoint, to: Endpoint)
        /// Tell the user.
        case event(Event)
    }

    /// What the group call reports.
    public enum Event: Sendable {
        /// We are a member: our presence is saved and the room read.
        case joined
        /// The members present, this peer included, in join order.
        case roster([CallMember])
        /// A leg started with a member. `caller`: `LegStart.onOfferWithoutPresence`.
        case legStarted(LegID, caller: Bool)
        /// A leg's call reports.
        case leg(LegID, PeerCall.Event)
        /// The room ended a leg (it is drained from now on).
        case legEnded(LegID, LegEndReason)
        /// A member is beyond the room's limit: no leg with it.
        case beyondLimit(userID: String, rank: Int, limit: Int)
        /// Every relay socket is held by another epoch (of this leg or another): this leg's new epoch
        /// allocates from the host socket, sharing that allocation (its relayed data may reach another leg).
        case noRelaySocket(LegID)
        /// A record another user wrote was dropped: for whom (if a leg's), and why.
        case rejectedRecord(remote: String?, String)
        /// The zone cannot be used: the call cannot go on.
        case zoneUnavailable(String)
        /// We left the room (every deletion of our leaving answered).
        case left(LeaveReason)
    }

    public let configuration: RoomCallConfiguration
    /// The room's signaling: presence, roster, every leg's negotiator, the change-sync.
    public private(set) var room: RoomSignaling
    /// Legs not yet drained, the ended ones closing among them.
    var legs: [RoomCallLeg] = []
    /// Legs drained, in the order they closed.
    public private(set) var results: [RoomLegResult] = []
    /// Where datagrams on the shared sockets go.
    var route = RoomDatagramRoute()
    /// Legs whose media is done.
    public private(set) var mediaDone: Set<LegID> = []
    /// When the room was joined (`.join`) and when every expected leg's media was done.
    public private(set) var startedAt: Instant?
    public private(set) var allMediaDoneAt: Instant?
    /// Datagrams no leg took.
    public private(set) var unroutedDatagrams = 0
    /// Where the next search for a free relay socket starts (`lendRelaySocket`).
    private var relaySocketCursor = 0
    private var outputs = OutputQueue<Output>()
    private var leaveAt: Instant?
    /// When to feed `.timer` next.
    public private(set) var nextDeadline: Instant?

    public init(configuration: RoomCallConfiguration, binding: RoomBinding, now: Instant) throws(SignalRecordError) {
        self.configuration = configuration
        room = try RoomSignaling(configuration: configuration.roomSignaling, binding: binding,
                                 myUserID: configuration.myUserID, epochClock: configuration.epochClock,
                                 seed: configuration.seed, now: now)
        nextDeadline = room.nextDeadline
    }

    /// Whether we left (or are leaving) the room.
    public var hasHungUp: Bool {
        switch room.state {
        case .leaving, .left: true
        case .idle, .joining, .joined: false
        }
    }

    /// Whether we left the room and every leg is drained.
    public var isClosed: Bool {
        if case .left = room.state { return legs.isEmpty }
        return false
    }

    /// How the call ended, once left: completed when the user (or the media being done) hung up.
    public var ending: PeerCall.Ending? {
        guard case .left(let reason) = room.state else { return nil }
        return reason == .requested ? .completed : .failed(reason.description)
    }

    /// The legs not yet drained: their IDs and calls' phases.
    public var liveLegs: [(id: LegID, phase: PeerCall.Phase)] { legs.map { ($0.id, $0.call.phase) } }

    /// The stream format the leg `id` receives, once its remote described it.
    public func remoteFormat(of id: LegID) -> VideoStreamFormat? {
        legs.first { $0.id == id }?.call.media.remoteFormat
    }

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .join:
            startedAt = startedAt ?? now
            room.handle(.join, now: now)
        case .signaling(let event):
            room.handle(event, now: now)
        case .hangUp:
            room.handle(.leave, now: now)
        case .timer:
            if let due = leaveAt, due <= now {
                leaveAt = nil
                room.handle(.leave, now: now)
            }
            if let wake = room.nextDeadline, wake <= now { room.handle(.timer, now: now) }
            for leg in legs {
                if let wake = leg.call.nextDeadline, wake <= now { leg.call.handle(.timer, now: now) }
            }
        case .datagram(let bytes, let from, let to):
            // Only a datagram on one of the relay sockets (none without TURN) looks for the epoch holding
            // it: the media on the host socket does not walk every leg's transports.
            let holder = configuration.relaySockets.contains(to) ? legs.first { $0.call.holdsRelaySocket(to) } : nil
            if let leg = holder ?? route.leg(for: bytes, from: from, among: legs) {
                leg.call.handle(.datagram(bytes, from: from, to: to), now: now)
            } else {
                unroutedDatagrams += 1
            }
        }
        pump(now: now)
        updateDeadline()
    }

    /// The next output, or nil until the next input.
    public mutating func pollOutput() -> Output? { outputs.pop() }

    // MARK: - Routing between the room and its legs

    /// Drains the room and every leg until all are quiet: the room's actions go to the legs, what
    /// the legs' transports report goes to the room, everything else out.
    private mutating func pump(now: Instant) {
        var busy = true
        while busy {
            busy = false
            while let action = room.pollOutput() {
                busy = true
                roomAction(action, now: now)
            }
            // Every leg's ICE reports of this pass go to the room as one event, so the chunks of
            // legs that gathered together (a join starting four legs) share one store request.
            var reports: [(remote: String, event: ICEEvent)] = []
            var goodbyes: [String] = []
            for leg in legs {
                while let output = leg.call.pollOutput() {
                    busy = true
                    legOutput(output, of: leg, now: now)
                }
                let events = leg.call.takeLegEvents()
                let goodbye = leg.call.takeRemoteGoodbye()
                guard !events.isEmpty || goodbye else { continue }
                busy = true
                guard leg.endReason == nil else { continue }
                for event in events { reports.append((leg.id.remote, event)) }
                if goodbye { goodbyes.append(leg.id.remote) }
            }
            if !reports.isEmpty { room.handle(.iceReports(reports), now: now) }
            for remote in goodbyes { room.handle(.remoteSaidGoodbye(remote: remote), now: now) }
            busy = legsEndedByThemselves(now: now) || busy
            busy = leaveIfMediaDone(now: now) || busy
            busy = collectDrained() || busy
        }
    }

    private mutating func roomAction(_ action: RoomSignaling.Action, now: Instant) {
        switch action {
        case .store(let request, let origin):
            outputs.append(.store(request, origin: origin))
        case .legStarted(let start):
            startLeg(start, now: now)
        case .ice(let remote, let command):
            guard let leg = liveLeg(remote) else { return }
            // Leaving, each leg tells its remote on its path before its transports close.
            if case .close = command, hasHungUp { leg.call.handle(.sayGoodbye, now: now) }
            if case .restartICE = command { lendRelaySocket(to: leg) }
            leg.call.handle(.leg(.ice(command)), now: now)
        case .report(let remote, let state):
            liveLeg(remote)?.call.handle(.leg(.report(state)), now: now)
        case .legEnded(let id, let reason, let counters):
            guard let leg = legs.first(where: { $0.id == id }) else { return }
            leg.endReason = reason
            leg.counters = counters
            outputs.append(.event(.legEnded(id, reason)))
            endLeg(leg, reason, now: now)
        case .rejected(let remote, let problem):
            outputs.append(.event(.rejectedRecord(remote: remote, problem.description)))
        case .joined:
            outputs.append(.event(.joined))
        case .roster(let members):
            outputs.append(.event(.roster(members)))
        case .beyondLimit(let user, let rank, let limit):
            outputs.append(.event(.beyondLimit(userID: user, rank: rank, limit: limit)))
        case .zoneUnavailable(let path, let error):
            outputs.append(.event(.zoneUnavailable("\(path): \(error)")))
        case .left(let reason):
            outputs.append(.event(.left(reason)))
        }
    }

    /// The leg with `remote` the room still negotiates.
    private func liveLeg(_ remote: String) -> RoomCallLeg? {
        legs.last { $0.id.remote == remote && $0.endReason == nil }
    }

    private mutating func startLeg(_ start: LegStart, now: Instant) {
        let leg = configuration.leg(remote: start.leg.remote, negotiator: start.configuration)
        do {
            let call = try PeerCall(leg: leg, binding: room.binding)
            let box = RoomCallLeg(id: start.leg, call: call, memberSession: start.memberSession)
            legs.append(box)
            outputs.append(.event(.legStarted(start.leg, caller: start.onOfferWithoutPresence)))
            box.call.handle(.start, now: now)
        } catch {
            outputs.append(.event(.rejectedRecord(remote: start.leg.remote, "no leg with \(start.leg.remote): \(error)")))
        }
    }

    /// Lends `leg`'s next epoch a relay socket no transport of any leg holds. A socket is held from the
    /// epoch's start until its transport is drained — its allocation deleted (Refresh with lifetime 0
    /// answered) or given up on — so a new epoch never allocates from the 5-tuple of one still being
    /// released (RFC 8656 §2.2, §7.2 step 1: a second Allocate on it is refused with 437; §7.3: a late
    /// Refresh with lifetime 0 on it would delete the new one).
    private mutating func lendRelaySocket(to leg: RoomCallLeg) {
        guard !configuration.relaySockets.isEmpty, !configuration.transport.turnServers.isEmpty else { return }
        let held = Set(legs.flatMap { $0.call.heldRelaySockets })
        // Round the pool from the socket after the last one lent: the longest free goes first, so even an
        // allocation whose deletion was given up on (no answer) has had the most time to expire.
        let pool = configuration.relaySockets
        let start = relaySocketCursor
        let free = pool.indices.lazy.map { (start + $0) % pool.count }.first { !held.contains(pool[$0]) }
        guard let free else {
            outputs.append(.event(.noRelaySocket(leg.id)))
            leg.call.lendRelaySocket(nil)
            return
        }
        relaySocketCursor = free + 1
        leg.call.lendRelaySocket(pool[free])
    }

    /// The room ended `leg`: a goodbye lets what already arrived finish, as in a call of two; any
    /// other end hangs the leg up now — completed when its media was done or it had none.
    private mutating func endLeg(_ leg: RoomCallLeg, _ reason: LegEndReason, now: Instant) {
        if case .remoteHungUp(let epoch, let type) = reason {
            leg.call.handle(.leg(.remoteHungUp(epoch: epoch, type)), now: now)
            return
        }
        let done = leg.call.milestones.mediaFinished != nil || !leg.call.media.isActive
        switch reason {
        case .localLeave where done, .remoteLeft where done, .remoteSaidGoodbye where done:
            leg.call.handle(.legEnded(.completed), now: now)
        default:
            leg.call.handle(.legEnded(.failed(reason.sentence(remote: leg.id.remote))), now: now)
        }
    }

    private mutating func legOutput(_ output: PeerCall.Output, of leg: RoomCallLeg, now: Instant) {
        switch output {
        case .store:
            break  // a leg's own signaling never starts: the room's makes its requests
        case .transmit(let bytes, let from, let to):
            route.note(sent: to, by: leg.id)
            outputs.append(.transmit(bytes, from: from, to: to))
        case .event(let event):
            if case .mediaFinished = event { mediaDone.insert(leg.id) }
            outputs.append(.event(.leg(leg.id, event)))
        }
    }

    /// Legs whose call ended by itself (media timeout, ICE restarts exhausted) while the room still
    /// had them: the room ends them, so a rejoin of that member starts a fresh pair. True if any.
    private mutating func legsEndedByThemselves(now: Instant) -> Bool {
        var any = false
        for leg in legs where leg.endReason == nil {
            guard let ending = leg.call.ending else { continue }
            any = true
            let detail = switch ending {
            case .completed: "completed"
            case .failed(let why): why
            }
            room.handle(.legFinished(remote: leg.id.remote, detail: detail), now: now)
            // The room had already forgotten it (it never reports an unknown leg): close the books here.
            if leg.endReason == nil { leg.endReason = .callEnded(detail) }
        }
        return any
    }

    /// Leaves once the media of every leg the call is for is done (after the delay). True if it acted.
    private mutating func leaveIfMediaDone(now: Instant) -> Bool {
        guard let expected = configuration.leaveAfterMedia, allMediaDoneAt == nil, mediaDone.count >= expected,
              room.state == .joined else { return false }
        allMediaDoneAt = now
        let delay = configuration.leaveAfterMediaDelay
        guard delay > .zero else {
            room.handle(.leave, now: now)
            return true
        }
        leaveAt = now + delay
        return false
    }

    /// Moves the legs the room ended and that are drained to `results`. True if any moved.
    private mutating func collectDrained() -> Bool {
        let drained = legs.filter { $0.endReason != nil && $0.call.isClosed }
        guard !drained.isEmpty else { return false }
        for leg in drained {
            results.append(leg.result)
            route.forget(leg.id)
        }
        legs.removeAll { $0.endReason != nil && $0.call.isClosed }
        return true
    }

    private mutating func updateDeadline() {
        var next = Instant.earliest(room.nextDeadline, leaveAt)
        for leg in legs { next = .earliest(next, leg.call.nextDeadline) }
        nextDeadline = next
    }

    /// Every leg's result: those drained, then those still up (as they are now).
    public var legResults: [RoomLegResult] { results + legs.map(\.result) }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension RoomCall: SansIOMachine {}
