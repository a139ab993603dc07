// A room of peers on one in-memory store engine and a manual clock, all synchronous: group-call
// members (`RoomSignaling`, a `FakeICE` per leg) and calls-of-two peers (`CallSignaling`, one
// `FakeICE`). Store requests run at once and their answers go straight back, as `CallDriver` runs
// them; push notifications wait for the next step; ICE checks run every step between the two ends of
// each leg. Nothing here reads a clock or waits: time moves only by `step`.
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

/// One group-call member of a lab.
final class MeshMember {
    let userID: String
    let binding: RoomBinding
    var room: RoomSignaling
    /// One ICE agent per leg, by remote user (a new one when a leg starts).
    var ice: [String: FakeICE] = [:]
    var octet: UInt8
    /// Every action other than store requests, in order.
    private(set) var log: [RoomSignaling.Action] = []
    /// Offline: time passes, it does nothing (a crash).
    var paused = false
    /// Store requests this member made, in order.
    private(set) var storeRequests: [StoreRequest] = []
    /// When set, the lab fails the member's atomic publications (an offer that never lands).
    var failsOfferPublications = false

    init(userID: String, binding: RoomBinding, room: RoomSignaling, octet: UInt8) {
        self.userID = userID
        self.binding = binding
        self.room = room
        self.octet = octet
    }

    var leftReason: LeaveReason? {
        for action in log { if case .left(let reason) = action { return reason } }
        return nil
    }

    /// Legs that ended, in order.
    var endedLegs: [(leg: LegID, reason: LegEndReason)] {
        log.compactMap { if case .legEnded(let id, let reason, _) = $0 { (id, reason) } else { nil } }
    }

    /// Legs that started, in order.
    var startedLegs: [LegStart] {
        log.compactMap { if case .legStarted(let start) = $0 { start } else { nil } }
    }

    /// Records dropped and reported.
    var rejected: [SignalInbox.Problem] {
        log.compactMap { if case .rejected(_, let problem) = $0 { problem } else { nil } }
    }

    /// Our descriptions set on the leg with `remote`, in order.
    func localDescriptions(toward remote: String) -> [SessionDescription] {
        log.compactMap {
            if case .ice(remote, .setLocalDescription(_, let description)) = $0 { description } else { nil }
        }
    }

    func note(_ action: RoomSignaling.Action) { log.append(action) }
    func noteRequest(_ request: StoreRequest) { storeRequests.append(request) }

    /// The state of the leg with `remote`, or nil when there is none.
    func state(toward remote: String) -> CallState? { room.negotiator(of: remote)?.state }
}

/// A peer running a call of two inside the lab's room.
final class PairMember {
    let userID: String
    let remoteUserID: String
    let binding: RoomBinding
    var signaling: CallSignaling
    var ice: FakeICE
    var paused = false

    init(userID: String, remoteUserID: String, binding: RoomBinding, signaling: CallSignaling, octet: UInt8) {
        self.userID = userID
        self.remoteUserID = remoteUserID
        self.binding = binding
        self.signaling = signaling
        ice = FakeICE(hostOctet: octet)
    }
}

/// The lab: the store, the clock, the members.
final class MeshLab {
    private(set) var engine = StoreEngine()
    private(set) var now: Instant
    let roomID: RoomID
    let owner: String
    private(set) var members: [MeshMember] = []
    private(set) var pairMembers: [PairMember] = []
    /// Notifications waiting for their device's next step, by user.
    private var pushes: [String: [PushNotification]] = [:]
    private var nextOctet: UInt8 = 10
    let configuration: RoomSignalingConfiguration
    static let device = "phone"

    /// A room owned by `owner` (who sets it up but joins only if asked), on a clock at `start`.
    init(owner: String = "_owner", configuration: RoomSignalingConfiguration = MeshLab.standard,
         start: Instant = .seconds(1_700_000_000)) throws {
        now = start
        roomID = try RoomID("room_mesh0001")
        self.owner = owner
        self.configuration = configuration
        _ = try setUp(owner)
    }

    /// Hybrid sync, every protection, garbage collection: what peers run.
    static var standard: RoomSignalingConfiguration { RoomSignalingConfiguration(signaling: .standard()) }

    /// Sets up `user` in the room (the owner creates it, others accept the share) and registers its
    /// device; `groupCalls` as a client that joins group calls.
    func setUp(_ user: String, groupCalls: Bool = true) throws -> RoomBinding {
        let role: RoomRole = user == owner ? .owner : .participant(ownerUserID: owner)
        var setup = RoomSetup(roomID: roomID, role: role, myUserID: user, displayName: user, roomName: "mesh",
                              groupCalls: groupCalls)
        try engine.registerDevice(RequestContext(user: user, deviceID: Self.device, now: now))
        setup.handle(.start, now: now)
        while let action = setup.pollOutput() {
            switch action {
            case .store(let request): setup.handle(.outcome(perform(request, as: user)), now: now)
            case .ready(let binding): return binding
            case .failed(let error): throw error
            }
        }
        throw StoreError(.internalError, "room setup stopped")
    }

    /// Adds a member `user` (set up in the room, not joined yet).
    @discardableResult
    func add(_ user: String, seed: UInt64? = nil,
             configuration custom: RoomSignalingConfiguration? = nil) throws -> MeshMember {
        let binding = try setUp(user)
        let room = try RoomSignaling(configuration: custom ?? configuration, binding: binding, myUserID: user,
                                     seed: seed ?? UInt64(members.count + 1) * 7_919, now: now)
        let member = MeshMember(userID: user, binding: binding, room: room, octet: nextOctet)
        nextOctet &+= 1
        members.append(member)
        return member
    }

    /// Adds a peer `user` calling `remote` as a call of two (set up in the room, not started).
    @discardableResult
    func addPair(_ user: String, calling remote: String) throws -> PairMember {
        let binding = try setUp(user, groupCalls: false)
        let signaling = try CallSignaling(configuration: .standard(), binding: binding, myUserID: user,
                                          remoteUserID: remote, seed: UInt64(pairMembers.count + 1) * 104_729)
        let peer = PairMember(userID: user, remoteUserID: remote, binding: binding, signaling: signaling,
                              octet: nextOctet)
        nextOctet &+= 1
        pairMembers.append(peer)
        return peer
    }

    /// Members joining now.
    func join(_ joining: [MeshMember]) {
        for member in joining { send(member, .join) }
    }

    /// Replaces `member`'s machine with a new one (a new member session: a rejoin after a crash or a
    /// restart of the process) and joins it.
    func rejoin(_ member: MeshMember, seed: UInt64) throws {
        member.room = try RoomSignaling(configuration: member.room.configuration, binding: member.binding,
                                        myUserID: member.userID, seed: seed, now: now)
        member.ice = [:]
        member.paused = false
        send(member, .join)
    }

    func member(_ user: String) -> MeshMember? { members.first { $0.userID == user } }

    // MARK: Running

    /// Carries out `first` and every action that follows from it, in order: `carry` does one and
    /// returns what the machine asked for next.
    private func carryOut<Action>(_ first: [Action], _ carry: (Action) -> [Action]) {
        var queue = first
        var next = 0
        while next < queue.count {
            queue += carry(queue[next])
            next += 1
        }
    }

    /// Feeds `event` to `member` and carries out everything that follows.
    func send(_ member: MeshMember, _ event: RoomSignaling.Event) {
        carryOut(member.room.outputs(after: event, now: now)) { action in
            switch action {
            case .store(let request, let origin):
                member.noteRequest(request)
                let outcome: StoreOutcome
                if member.failsOfferPublications, case .modifyRecords(let modify) = request.operation, modify.atomic {
                    outcome = .failed(StoreError(.internalError, "the lab lost this publication"))
                } else {
                    outcome = perform(request, as: member.userID)
                }
                return member.room.outputs(after: .reply(origin, outcome), now: now)
            case .legStarted(let start):
                member.note(action)
                member.ice[start.leg.remote] = FakeICE(hostOctet: member.octet)
                return []
            case .ice(let remote, let command):
                member.note(action)
                guard var ice = member.ice[remote] else { return [] }
                let events = ice.perform(command, now: now)
                member.ice[remote] = ice
                return events.flatMap { member.room.outputs(after: .iceReports([(remote, $0)]), now: now) }
            default:
                member.note(action)
                return []
            }
        }
    }

    /// Feeds `event` to a call-of-two peer and carries out everything that follows.
    func send(_ peer: PairMember, _ event: CallSignaling.Event) {
        carryOut(peer.signaling.outputs(after: event, now: now)) { action in
            switch action {
            case .store(let request, let origin):
                return peer.signaling.outputs(after: .reply(origin, perform(request, as: peer.userID)), now: now)
            case .ice(let command):
                return peer.ice.perform(command, now: now).flatMap { peer.signaling.outputs(after: .ice($0), now: now) }
            case .report, .zoneUnavailable, .rejected, .remoteHungUp:
                return []
            }
        }
    }

    /// Moves time by `dt`: each peer gets its notifications and its timer, then each leg's ICE checks run.
    func step(_ dt: Duration = .milliseconds(100)) {
        now += dt
        for member in members {
            let notes = pushes.removeValue(forKey: member.userID) ?? []
            guard !member.paused else { continue }
            for note in notes { send(member, .notification(note)) }
            if let due = member.room.nextDeadline, due <= now { send(member, .timer) }
        }
        for peer in pairMembers {
            let notes = pushes.removeValue(forKey: peer.userID) ?? []
            guard !peer.paused else { continue }
            for note in notes { send(peer, .notification(note)) }
            if let due = peer.signaling.nextDeadline, due <= now { send(peer, .timer) }
        }
        for member in members where !member.paused {
            for remote in member.ice.keys.sorted() {
                guard let other = counterpart(of: member.userID, at: remote), var ice = member.ice[remote] else {
                    continue
                }
                let events = ice.tick(now: now, peer: other)
                member.ice[remote] = ice
                for event in events { send(member, .iceReports([(remote, event)])) }
            }
        }
        for peer in pairMembers where !peer.paused {
            guard let other = counterpart(of: peer.userID, at: peer.remoteUserID) else { continue }
            for event in peer.ice.tick(now: now, peer: other) { send(peer, .ice(event)) }
        }
    }

    /// The ICE agent `remote` runs toward `user`.
    private func counterpart(of user: String, at remote: String) -> FakeICE? {
        if let member = member(remote) { return member.ice[user] }
        return pairMembers.first { $0.userID == remote && $0.remoteUserID == user }?.ice
    }

    /// Steps until `done` holds or `limit` has passed; returns whether it held.
    @discardableResult
    func run(for limit: Duration, step dt: Duration = .milliseconds(100), until done: () -> Bool = { false }) -> Bool {
        let end = now + limit
        while now < end {
            if done() { return true }
            step(dt)
        }
        return done()
    }

    /// Whether the pair (`a`, `b`) is connected at both ends on the same epoch.
    func connected(_ a: MeshMember, _ b: MeshMember) -> Bool {
        guard let epoch = a.ice[b.userID]?.connectedEpoch, b.ice[a.userID]?.connectedEpoch == epoch else {
            return false
        }
        return a.state(toward: b.userID) == .connected(epoch) && b.state(toward: a.userID) == .connected(epoch)
    }

    /// Whether every pair of `group` is connected.
    func meshConnected(_ group: [MeshMember]) -> Bool {
        for (i, a) in group.enumerated() {
            for b in group[(i + 1)...] where !connected(a, b) { return false }
        }
        return true
    }

    // MARK: The store

    /// Carries out `request` as `user` now; the notifications it causes wait for their devices' next step.
    func perform(_ request: StoreRequest, as user: String) -> StoreOutcome {
        let ctx = RequestContext(user: user, deviceID: Self.device, now: now)
        let scope = request.scope
        let outcome: StoreOutcome
        do throws(StoreError) {
            switch request.operation {
            case .modifyRecords(let r): outcome = .modified(try engine.modifyRecords(r, scope: scope, ctx))
            case .lookupRecords(let ids): outcome = .lookedUp(try engine.lookupRecords(ids, scope: scope, ctx))
            case .fetchZoneChanges(let zone, let since, let limit):
                outcome = .zoneChanges(try engine.fetchZoneChanges(zone, since: since, resultsLimit: limit,
                                                                   scope: scope, ctx))
            case .fetchDatabaseChanges(let since):
                outcome = .databaseChanges(try engine.fetchDatabaseChanges(since: since, scope: scope, ctx))
            case .createZone(let zone):
                outcome = .zones(try engine.modifyZones(save: [zone], delete: [], scope: scope, ctx))
            case .createShare(let zone, let permission, let participants):
                outcome = .share(try engine.createShare(zone: zone, publicPermission: permission,
                                                        participants: participants, ctx))
            case .fetchShare(let zone): outcome = .share(try engine.fetchShare(zone: zone, scope: scope, ctx))
            case .acceptShare(let zone): outcome = .share(try engine.acceptShare(zone: zone, ctx))
            case .saveSubscription(let s):
                outcome = .subscriptions(try engine.modifySubscriptions(save: [s], delete: [], scope: scope, ctx))
            }
        } catch {
            outcome = .failed(error)
        }
        for note in engine.drainNotifications() { pushes[note.userRecordName, default: []].append(note.notification) }
        return outcome
    }

    /// Saves records as `user`, overwriting (fixtures and hostile writes).
    func write(_ records: [Record], as user: String, scope: DatabaseScope = .shared) {
        let outcome = perform(StoreRequest(scope: scope, .modifyRecords(
            ModifyRecordsRequest(saves: records, savePolicy: .allKeys))), as: user)
        if case .failed(let error) = outcome { Issue.record("the fixture was refused: \(error)") }
    }

    /// Every record in the zone now.
    var zoneRecords: [Record] {
        let ctx = RequestContext(user: owner, deviceID: "inspector", now: now)
        var all: [Record] = []
        var token: ChangeToken?
        while true {
            guard let page = try? engine.fetchZoneChanges(roomID.zoneID(owner: owner), since: token, scope: .private,
                                                          ctx) else { return all }
            all += page.changed
            token = page.syncToken
            if !page.moreComing { return all }
        }
    }

    /// Records in the zone now of the group call's types (presence and signal records).
    var callRecords: [Record] {
        zoneRecords.filter {
            $0.recordType == SignalRecordType.callMember || SignalRecordType.signalTypes.contains($0.recordType)
        }
    }
}
