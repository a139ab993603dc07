// One simulated group call: N members each running the real `RoomCall` (the room's signaling with
// one change-sync, one `PeerCall` leg per other member with its ICE transport), a real `StoreEngine`
// and `PushDeliveryModel` behind `SimulatedStore`, on the scheduler's virtual clock and the virtual
// network. As `CallTrial` for a call of two, the trial only drives: it moves datagrams, store requests,
// replies and pushes between the machines at the instants the models give, and records each step in
// the trace. Members join together, one every D, or the last once the others are all connected.
// Members are on direct paths (no NAT, no relay: a group call's legs share one socket, and relayed
// data of several legs is not told apart yet, docs/GROUP-CALLS.md). With a leave scenario the trial
// goes on once every pair is connected: the last member to join leaves (hangs up, or crashes), the
// others end their leg with it, then everyone hangs up and the zone is checked for records left.
import ICE
import Peer
import RecordStore
import Signaling
import ZoneCore

/// When the members of a simulated group call join.
public enum JoinSchedule: Hashable, Sendable, CustomStringConvertible {
    /// All at the start.
    case simultaneous
    /// Member i at i × the duration.
    case staggered(Duration)
    /// All but the last at the start; the last once every pair of the others is connected.
    case late

    /// `simultaneous`, `staggered:DURATION` or `late`.
    public var description: String {
        switch self {
        case .simultaneous: "simultaneous"
        case .staggered(let d): "staggered:\(SimulationDuration.format(d))"
        case .late: "late"
        }
    }
}

/// A simulated group call among `members`, from the first join until every pair is connected on one
/// epoch at both ends (or the deadline after the last join).
public struct RoomTrial: ~Copyable {
    /// The members' user IDs, in the order they may join.
    public static let users = ["_a11ce", "_b0b", "_ca401", "_da7e", "_e41n"]

    private enum Event {
        case join(Int)
        case wake(Int)
        case datagram(Datagram)
        indirect case storeArrival(Int, StoreRequest, RoomSignaling.Origin, reply: Duration)
        indirect case storeReply(Int, RoomSignaling.Origin, StoreOutcome)
        case push
        /// The leave scenario's member leaves.
        case leave
        /// Everyone still in the call hangs up.
        case hangUpAll
        /// Tests (`forgesGoodbyes`): a datagram reaches member `Int` from where its sender was not.
        case forged(Int, [UInt8], from: Endpoint, to: Endpoint)
        /// Tests (`intrusions`): intrusion `Int` writes its records.
        case intrude(Int)
    }

    /// Tests: bad input written into the room's zone (docs/GROUP-CALLS.md "What each member's summary
    /// counts"): `user` — one of the trial's `bystanders` (the share accepted, not in the call), or any other
    /// name (not in the share: the store refuses it) — saves `records` made at that moment, `after` the start.
    public struct Intrusion: Sendable {
        public var after: Duration
        public var user: String
        public var records: @Sendable (_ zone: ZoneID, _ now: Instant) -> [Record]

        public init(after: Duration, user: String, records: @escaping @Sendable (ZoneID, Instant) -> [Record]) {
            self.after = after
            self.user = user
            self.records = records
        }
    }

    /// Tests: what to write when (set before `run`).
    public var intrusions: [Intrusion] = []
    /// What the store answered each intrusion, by its index in `intrusions`.
    public private(set) var intrusionOutcomes: [Int: StoreOutcome] = [:]
    /// Tests: without a leave scenario, the trial goes on until this long after the start even once every pair
    /// is connected (for what intrusions set off to run its course).
    public var holdFor: Duration?

    /// A member and the driver's bookkeeping for it.
    private final class Member {
        let user: String
        var call: RoomCall
        let host: HostID
        let socket: Endpoint
        var wakeAt: Instant?
        var joinedAt: Instant?
        var pushes = 0
        var storeRequestsOut = 0
        /// Stopped dead (the crash scenario): nothing reaches it any more.
        var crashed = false
        /// Its leaving was answered (`.left`).
        var left = false
        /// When it ended its leg with the member that left.
        var closedLegAt: Instant?
        /// Whether it ended that leg on the leaving member's goodbye on the leg's path.
        var closedOnGoodbye = false

        init(user: String, call: consuming RoomCall, host: HostID, socket: Endpoint) {
            self.user = user
            self.call = call
            self.host = host
            self.socket = socket
        }
    }

    public let configuration: TrialConfiguration
    public let join: JoinSchedule
    public let leave: LeaveScenario
    public let index: Int
    public let seed: UInt64
    private var scheduler: EventScheduler<Event>
    private var network: VirtualNetwork
    private var store: SimulatedStore
    private let members: [Member]
    private var trace: EventTrace
    /// When each pair (i < j) was first connected on one epoch at both ends, and on which.
    private var pairConnected: [Int: (at: Instant, epoch: CallEpoch)] = [:]
    private var lastJoinedAt: Instant?
    private var lateJoinScheduled = false
    /// The room's zone as its owner (the first member) reaches it.
    private let ownerZone: ZoneID
    /// With `.late`: each pair of the others' epochs started (both ends) when the last member joined.
    private var epochsAtLateJoin: [Int: Int] = [:]
    /// When the member of the leave scenario left, and when everyone was told to hang up.
    private var leftAt: Instant?
    private var leaveScheduled = false
    private var hangUpAt: Instant?
    /// Tests: the leaving member's goodbye to the first member is withheld; that member gets it from
    /// another address instead, and the goodbye meant for the second member from the leaving member's own
    /// address. Neither may end its leg (docs/PROTOCOL.md §11.4): it ends when the departure reaches it
    /// through the store.
    var forgesGoodbyes = false
    /// Where the forged goodbyes come from: an address no member has.
    static let forger = Endpoint(address: .v4(0xC633_6463), port: 50_099)  // 198.51.100.99

    /// `bystanders`: users who accept the room's share but never join the call (for `intrusions`).
    /// `media` and `mediaSecurity`: what every member sends and receives on its legs, and how it is
    /// protected (by default nothing and plain RTP: the trials measure signaling and ICE).
    public init(configuration: TrialConfiguration, members count: Int, join: JoinSchedule,
                leave: LeaveScenario = .none, index: Int, seed: UInt64, bystanders: [String] = [],
                media: CallMediaConfiguration = CallMediaConfiguration(),
                mediaSecurity: MediaProtectionMode = .none) throws {
        precondition((2...Self.users.count).contains(count), "a simulated group call has 2 to 5 members")
        var random = SeededRandom(seed: seed)
        let start = CallTrial.start
        var trace = EventTrace(origin: start, capturesText: configuration.traceText)
        trace.record(.trialStart, at: start, actor: 0, UInt64(index), seed,
                     text: "\(index) seed \(seed) mesh of \(count), join \(join)")
        var network = VirtualNetwork(seed: random.next())
        var engine = StoreEngine(configuration: {
            var store = configuration.store
            store.throttle.seed = random.next()
            return store
        }())
        let setupTime = start - .seconds(3600)
        let roomID = try RoomID(CallTrial.roomName)
        let users = Array(Self.users.prefix(count))
        var bindings: [RoomBinding] = []
        for user in users {
            let role: RoomRole = user == users[0] ? .owner : .participant(ownerUserID: users[0])
            bindings.append(try TrialScene.setUp(&engine, RoomSetup(roomID: roomID, role: role, myUserID: user,
                                                                    displayName: user, roomName: "simulated"),
                                                 now: setupTime))
            try engine.registerDevice(RequestContext(user: user, deviceID: CallTrial.device, now: setupTime))
        }
        for user in bystanders {
            _ = try TrialScene.setUp(&engine, RoomSetup(roomID: roomID, role: .participant(ownerUserID: users[0]),
                                                        myUserID: user, displayName: user, roomName: "simulated"),
                                     now: setupTime)
        }
        _ = engine.drainNotifications()
        let store = SimulatedStore(engine: engine, pushProfile: configuration.push,
                                   latency: configuration.storeLatency, faults: configuration.faults, origin: start,
                                   seed: random.next())
        var signaling = configuration.signaling
        signaling.negotiator.payloads = SignalPayloadCache()
        var members: [Member] = []
        for (n, user) in users.enumerated() {
            let address = IPAddress.v4(0xC633_6400 | UInt32(10 * (n + 1)))  // 198.51.100.10, .20, …
            let host = network.addHost(user, address: address, link: configuration.link)
            let socket = Endpoint(address: address, port: UInt16(50_000 + n * 2))
            var callConfiguration = RoomCallConfiguration(
                myUserID: user, room: RoomSignalingConfiguration(signaling: signaling),
                transport: PeerTransportConfiguration(hostAddresses: [socket]), media: media, seed: random.next())
            callConfiguration.mediaSecurity = mediaSecurity
            let call = try RoomCall(configuration: callConfiguration, binding: bindings[n], now: start)
            members.append(Member(user: user, call: call, host: host, socket: socket))
        }
        self.configuration = configuration
        self.join = join
        self.leave = leave
        ownerZone = bindings[0].zone
        self.index = index
        self.seed = seed
        self.trace = trace
        self.network = network
        self.store = store
        self.members = members
        scheduler = EventScheduler(start: start)
        for n in members.indices {
            switch join {
            case .simultaneous: scheduler.schedule(.join(n), at: start)
            case .staggered(let step): scheduler.schedule(.join(n), at: start + step * n)
            case .late: if n < count - 1 { scheduler.schedule(.join(n), at: start) }
            }
        }
    }

    /// Runs until every pair is connected on one epoch at both ends, or `configuration.deadline` after
    /// the last member joined; with a leave scenario, on until everyone has left (each step bounded).
    public mutating func run() -> RoomTrialOutcome {
        let start = CallTrial.start
        for (k, intrusion) in intrusions.enumerated() { scheduler.schedule(.intrude(k), at: start + intrusion.after) }
        while true {
            let limit: Instant
            if !converged {
                limit = (lastJoinedAt ?? start) + configuration.deadline
                    + (join == .late ? configuration.deadline : .zero)
            } else if leave == .none {
                guard let holdFor, scheduler.now < start + holdFor else { break }
                limit = start + holdFor
            } else if let hangUpAt {
                if members.allSatisfy({ $0.left || $0.crashed }) { break }
                limit = hangUpAt + LeaveScenario.leaveBound
            } else {
                if !leaveScheduled {
                    leaveScheduled = true
                    scheduler.schedule(.leave, at: scheduler.now + .seconds(1))
                }
                limit = (leftAt ?? scheduler.now + .seconds(1)) + LeaveScenario.closeBound
                    + (leave == .crash ? LeaveScenario.crashCollection : .zero)
            }
            guard let event = scheduler.next(notAfter: limit) else {
                scheduler.advance(to: limit)
                if converged, leave != .none, hangUpAt == nil {
                    handle(.hangUpAll)
                    continue
                }
                break
            }
            handle(event)
        }
        return outcome()
    }

    private var allJoined: Bool { members.allSatisfy { $0.joinedAt != nil } }

    private var converged: Bool {
        let count = members.count
        return pairConnected.count == count * (count - 1) / 2 && allJoined
    }

    /// The member that leaves in the leave scenario: the last to join.
    private var leaver: Int { members.count - 1 }

    private mutating func outcome() -> RoomTrialOutcome {
        let start = CallTrial.start
        let count = members.count
        var pairTimes: [Duration?] = []
        for i in 0..<count {
            for j in (i + 1)..<count {
                let joined = max(members[i].joinedAt ?? start, members[j].joinedAt ?? start)
                pairTimes.append(pairConnected[i * 8 + j].map { $0.at - joined })
            }
        }
        let all = pairConnected.count == count * (count - 1) / 2 && allJoined
            ? pairConnected.values.map(\.at).max().map { $0 - start } : nil
        var late: Duration?
        if join == .late, let joined = members[count - 1].joinedAt {
            let times = (0..<(count - 1)).map { pairConnected[$0 * 8 + count - 1]?.at }
            if times.allSatisfy({ $0 != nil }) { late = times.compactMap { $0 }.max().map { $0 - joined } }
        }
        var existingPairEpochs: Int?
        if join == .late, lateJoinScheduled {
            existingPairEpochs = epochsAtLateJoin.reduce(0) { sum, entry in
                sum + max(0, pairEpochs(entry.key / 8, entry.key % 8) - entry.value)
            }
        }
        var leaveOutcome: RoomLeaveOutcome?
        if leave != .none, let leftAt {
            let others = members.indices.filter { $0 != leaver }
            let closes = others.compactMap { members[$0].closedLegAt }
            leaveOutcome = RoomLeaveOutcome(
                closed: closes.count == others.count ? closes.max().map { $0 - leftAt } : nil,
                everyoneLeft: others.allSatisfy { members[$0].left }, recordsLeft: countRecordsLeft(),
                closedOnGoodbye: others.count(where: { members[$0].closedOnGoodbye }))
        }
        let minutes = max(1e-9, Double((scheduler.now - start).nanoseconds) / 60e9)
        let peers = members.map { member in
            let snapshot = RoomCallSnapshot(member.call)
            var cost = RoomPeerCost(requests: snapshot.requests, recordsFetched: snapshot.sync.recordsFetched,
                                    bytesFetched: snapshot.sync.bytesFetched,
                                    otherPairRecords: snapshot.counters.otherPairRecords,
                                    pushesPerMinute: Double(member.pushes) / minutes, resets: 0, epochsAbandoned: 0,
                                    epochsStarted: 0, throttled: snapshot.sync.throttled)
            for leg in member.call.room.legIDs {
                guard let c = member.call.room.legCounters(leg.remote) else { continue }
                cost.resets += c.resets
                cost.epochsAbandoned += c.negotiator.epochsAbandoned
                cost.epochsStarted += c.negotiator.epochsStarted
            }
            return cost
        }
        return RoomTrialOutcome(index: index, seed: seed, allPairs: all, pairs: pairTimes, lateJoiner: late,
                                existingPairEpochs: existingPairEpochs, leave: leaveOutcome, peers: peers,
                                rooms: members.map { RoomCallSnapshot($0.call) }, events: scheduler.processed,
                                trace: trace)
    }

    /// Epochs started by both ends of the pair of members `i` and `j` (their current legs).
    private func pairEpochs(_ i: Int, _ j: Int) -> Int {
        let a = members[i].call.room.legCounters(members[j].user)?.negotiator.epochsStarted ?? 0
        let b = members[j].call.room.legCounters(members[i].user)?.negotiator.epochsStarted ?? 0
        return a + b
    }

    /// The group-call records (presence and signaling) still in the zone.
    private mutating func countRecordsLeft() -> Int {
        let types: Set<String> = [SignalRecordType.callMember, SignalRecordType.session, SignalRecordType.envelope,
                                  SignalRecordType.iceChunk]
        return store.liveRecords(of: ownerZone, owner: members[0].user, now: scheduler.now)
            .count(where: { types.contains($0.recordType) })
    }

    // MARK: Events

    private mutating func handle(_ event: consuming Event) {
        let now = scheduler.now
        switch consume event {
        case .join(let i):
            members[i].joinedAt = now
            lastJoinedAt = now
            if join == .late, i == members.count - 1 {
                for a in 0..<i { for b in (a + 1)..<i { epochsAtLateJoin[a * 8 + b] = pairEpochs(a, b) } }
            }
            trace.record(.callStart, at: now, actor: UInt8(i + 1))
            feed(i, .join)
        case .wake(let i):
            guard members[i].wakeAt == now, !members[i].crashed else { return }
            members[i].wakeAt = nil
            feed(i, .timer)
        case .datagram(let datagram):
            switch network.deliver(datagram, now: now) {
            case .failure(let reason):
                trace.record(.datagramDropped, at: now, actor: 5, UInt64(reason.rawValue))
            case .success(let delivery):
                guard let i = members.indices.first(where: { members[$0].host == delivery.host }),
                      delivery.to == members[i].socket, !members[i].crashed else { return }
                trace.record(.datagramDelivered, at: now, actor: UInt8(i + 1), EventTrace.pack(delivery.from),
                             EventTrace.pack(delivery.to), EventTrace.fingerprint(datagram.payload))
                feed(i, .datagram(datagram.payload, from: delivery.from, to: delivery.to))
            }
        case .storeArrival(let i, let request, let origin, let reply):
            let outcome = store.execute(request, user: members[i].user, device: CallTrial.device, now: now)
            trace.record(.storeReply, at: now, actor: 3, UInt64(i + 1))
            scheduler.schedule(.storeReply(i, origin, outcome), after: reply)
            schedulePush()
        case .storeReply(let i, let origin, let outcome):
            members[i].storeRequestsOut -= 1
            guard !members[i].crashed else { return }
            feed(i, .signaling(.reply(origin, outcome)))
        case .push:
            // This wake-up is spent: the next delivery gets one of its own, even if no store request (and
            // so no `schedulePush` of its arrival) follows, as when only a member already leaving is reached.
            pushWakeAt = nil
            for note in store.duePushes(now: now) {
                guard let i = members.indices.first(where: { members[$0].user == note.userRecordName }),
                      members[i].joinedAt != nil, !members[i].crashed else { continue }
                members[i].pushes += 1
                trace.record(.pushDelivered, at: now, actor: UInt8(i + 1), note.notification.notificationID)
                feed(i, .signaling(.notification(note.notification)))
            }
            schedulePush()
        case .leave:
            leftAt = now
            trace.record(.hangUp, at: now, actor: UInt8(leaver + 1))
            if leave == .crash {
                members[leaver].crashed = true
            } else {
                feed(leaver, .hangUp)
            }
        case .forged(let i, let bytes, let from, let to):
            guard !members[i].crashed else { return }
            trace.record(.datagramDelivered, at: now, actor: UInt8(i + 1), EventTrace.pack(from), EventTrace.pack(to),
                         EventTrace.fingerprint(bytes))
            feed(i, .datagram(bytes, from: from, to: to))
        case .intrude(let k):
            let intrusion = intrusions[k]
            let request = StoreRequest(scope: .shared, .modifyRecords(ModifyRecordsRequest(
                saves: intrusion.records(ownerZone, now), savePolicy: .allKeys, atomic: false)))
            intrusionOutcomes[k] = store.execute(request, user: intrusion.user, device: CallTrial.device, now: now)
            schedulePush()
        case .hangUpAll:
            guard hangUpAt == nil else { return }
            hangUpAt = now
            for i in members.indices where !members[i].crashed && !members[i].left {
                feed(i, .hangUp)
            }
        }
    }

    /// Every other member has ended its leg with the one that left: everyone hangs up, a second later
    /// (after a crash, once its presence can have been collected).
    private mutating func legClosedWithLeaver(now: Instant) {
        guard let leftAt, hangUpAt == nil,
              members.indices.allSatisfy({ $0 == leaver || members[$0].closedLegAt != nil }) else { return }
        let at = leave == .crash ? max(now + .seconds(1), leftAt + LeaveScenario.crashCollection) : now + .seconds(1)
        scheduler.schedule(.hangUpAll, at: at)
    }

    private mutating func feed(_ i: Int, _ input: RoomCall.Input) {
        let now = scheduler.now
        let member = members[i]
        member.call.handle(input, now: now)
        while let output = member.call.pollOutput() {
            switch output {
            case .store(let request, let origin):
                member.storeRequestsOut += 1
                let (arrival, reply) = store.timing(client: member.user, now: now)
                trace.record(.storeRequest, at: now, actor: UInt8(i + 1))
                scheduler.schedule(.storeArrival(i, request, origin, reply: reply), at: arrival)
            case .transmit(let bytes, let from, let to) where forgesGoodbyes && i == leaver && leftAt != nil:
                forge(bytes, from: from, to: to)
            case .transmit(let bytes, let from, let to):
                switch network.transmit(bytes, from: from, to: to, host: member.host, now: now) {
                case .failure(let reason):
                    trace.record(.datagramDropped, at: now, actor: UInt8(i + 1), UInt64(reason.rawValue))
                case .success(let copies):
                    trace.record(.datagramSent, at: now, actor: UInt8(i + 1), EventTrace.pack(from), EventTrace.pack(to),
                                 EventTrace.fingerprint(bytes))
                    let datagram = copies.datagram(carrying: bytes)
                    scheduler.schedule(.datagram(datagram), at: copies.at)
                    if let again = copies.duplicateAt { scheduler.schedule(.datagram(datagram), at: again) }
                }
            case .event(.legEnded(let id, let reason)) where leftAt != nil && id.remote == members[leaver].user:
                if members[i].closedLegAt == nil {
                    members[i].closedLegAt = now
                    members[i].closedOnGoodbye = reason == .remoteSaidGoodbye
                }
                legClosedWithLeaver(now: now)
            case .event(.left):
                members[i].left = true
            case .event(.leg(let id, .callState(let state))):
                trace.record(.callState, at: now, actor: UInt8(i + 1), UInt64(id.generation),
                             UInt64(bitPattern: state.epoch?.milliseconds ?? 0))
                checkPair(i, id.remote, now: now)
            case .event:
                break
            }
        }
        scheduleWake(i)
    }

    /// `forgesGoodbyes`: what the leaving member sends once it left (its goodbyes) to the first member goes
    /// to it from the forger's address; what it sends to the second goes there, and to the first from the
    /// leaving member's own address.
    private mutating func forge(_ bytes: [UInt8], from: Endpoint, to: Endpoint) {
        let at = scheduler.now + .milliseconds(1)
        if to == members[0].socket {
            scheduler.schedule(.forged(0, bytes, from: Self.forger, to: to), at: at)
            return
        }
        if to == members[1].socket { scheduler.schedule(.forged(0, bytes, from: from, to: members[0].socket), at: at) }
        if let i = members.indices.first(where: { members[$0].socket == to }) {
            scheduler.schedule(.forged(i, bytes, from: from, to: to), at: at)
        }
    }

    /// The pair of member `i` and `remote`: connected on the same epoch at both ends?
    private mutating func checkPair(_ i: Int, _ remote: String, now: Instant) {
        guard let j = members.indices.first(where: { members[$0].user == remote }) else { return }
        let key = min(i, j) * 8 + max(i, j)
        guard pairConnected[key] == nil,
              case .connected(let e) = members[i].call.room.negotiator(of: remote)?.state,
              members[j].call.room.negotiator(of: members[i].user)?.state == .connected(e) else { return }
        pairConnected[key] = (now, e)
        trace.record(.converged, at: now, actor: 0, UInt64(key), UInt64(bitPattern: e.milliseconds))
        scheduleLateJoin(now: now)
    }

    /// Late joining: the last member joins once every pair of the others is connected.
    private mutating func scheduleLateJoin(now: Instant) {
        guard join == .late, !lateJoinScheduled else { return }
        let others = members.count - 1
        guard pairConnected.count == others * (others - 1) / 2 else { return }
        lateJoinScheduled = true
        scheduler.schedule(.join(others), at: now + .seconds(1))
    }

    private mutating func scheduleWake(_ i: Int) {
        let now = scheduler.now
        guard var next = members[i].call.nextDeadline else { return }
        if next <= now { next = now + .milliseconds(1) }
        if let current = members[i].wakeAt, current <= next, current > now { return }
        members[i].wakeAt = next
        scheduler.schedule(.wake(i), at: next)
    }

    private var pushWakeAt: Instant?

    private mutating func schedulePush() {
        guard let next = store.nextPushDeadline else { return }
        if let current = pushWakeAt, current <= next { return }
        pushWakeAt = next
        scheduler.schedule(.push, at: next)
    }
}

/// What one member of a simulated group call cost.
public struct RoomPeerCost: Sendable {
    /// Store requests by kind.
    public var requests: CallSignaling.RequestCounts
    public var recordsFetched: Int
    public var bytesFetched: Int
    /// Records fetched that belonged to pairs this member has no leg in.
    public var otherPairRecords: Int
    /// Pushes delivered to its device per minute of the trial.
    public var pushesPerMinute: Double
    /// Offers applied over a set remote description, epochs abandoned and started, over its legs.
    public var resets: Int
    public var epochsAbandoned: Int
    public var epochsStarted: Int
    /// Fetches the store throttled.
    public var throttled: Int
}

/// The result of one simulated group call.
public struct RoomTrialOutcome: Sendable {
    public var index: Int
    public var seed: UInt64
    /// First join → every pair connected on one epoch at both ends; nil when not within the deadline.
    public var allPairs: Duration?
    /// Each pair (i < j, in order): the later member's join → connected at both ends; nil if never.
    public var pairs: [Duration?]
    /// With `.late`: the last member's join → all its pairs connected.
    public var lateJoiner: Duration?
    /// With `.late`: epochs the pairs of the others started after the last member joined (both ends).
    public var existingPairEpochs: Int?
    /// With a leave scenario, once every pair was connected: what leaving did.
    public var leave: RoomLeaveOutcome?
    public var peers: [RoomPeerCost]
    /// Each member's legs, requests and room counters at the end.
    public var rooms: [RoomCallSnapshot]
    public var events: Int
    public var trace: EventTrace
}

/// What a leave scenario did in one trial.
public struct RoomLeaveOutcome: Sendable {
    /// The member's leaving (hang-up or crash) → every other member has ended its leg with it; nil if
    /// some did not within `LeaveScenario.closeBound`.
    public var closed: Duration?
    /// Whether every other member's leaving was answered after they all hung up.
    public var everyoneLeft: Bool
    /// Presence and signal records left in the zone at the end.
    public var recordsLeft: Int
    /// Other members that ended their leg with it on its goodbye on the leg's path (the rest learned of
    /// its departure through the store, or by consent expiry after a crash).
    public var closedOnGoodbye: Int
}
