// Two peers in one room of an in-memory embedded store, on a manual clock: each peer is a
// `CallDriver` (CallTestSupport's driver) with a `FakeICE`. The harness moves time in steps,
// pumps push by hand and waits for the notifications to land — never on the wall clock.
import CallTestSupport
import RecordStore
import Signaling
import Testing
import ZoneCore

/// One peer of a harness.
final class TestPeer {
    let userID: String
    let client: EmbeddedStoreClient
    let binding: RoomBinding
    let driver: CallDriver
    var ice: FakeICE
    private(set) var reports: [CallState] = []
    private(set) var unavailable: [String] = []
    /// The remote's goodbyes read: the epoch and the type of its description that left the zone.
    private(set) var remoteHangUps: [(epoch: CallEpoch, type: EnvelopeType)] = []
    var seed: UInt64
    /// A paused peer is offline: time passes, it does nothing.
    var paused = false

    init(userID: String, client: EmbeddedStoreClient, binding: RoomBinding, driver: CallDriver, ice: FakeICE,
         seed: UInt64) {
        self.userID = userID
        self.client = client
        self.binding = binding
        self.driver = driver
        self.ice = ice
        self.seed = seed
    }

    var signaling: CallSignaling { driver.signaling }
    var negotiator: CallNegotiator { driver.signaling.negotiator }
    var counters: SignalingCounters { driver.signaling.counters }
    var state: CallState { negotiator.state }

    /// Feeds an event and carries out what comes back (ICE commands go to the fake, whose
    /// events go back in).
    func send(_ event: CallSignaling.Event, now: Instant) async {
        await process(driver.handle(event, now: now), now: now)
    }

    func process(_ actions: [CallSignaling.Action], now: Instant) async {
        var pending = actions
        var next = 0
        while next < pending.count {
            let action = pending[next]
            next += 1
            switch action {
            case .ice(let command):
                for event in ice.perform(command, now: now) {
                    pending += await driver.handle(.ice(event), now: now)
                }
            case .report(let state):
                reports.append(state)
            case .zoneUnavailable(let path, _):
                unavailable.append(path)
            case .rejected:
                break
            case .remoteHungUp(let epoch, let type):
                remoteHangUps.append((epoch, type))
            case .store:
                Issue.record("the driver left a store request undone")
            }
        }
    }
}

/// Two peers, A (room owner) and B (participant), in `room_test0001`.
final class CallHarness {
    let clock: ManualClock
    let store: EmbeddedStore
    var roomID: RoomID { a.binding.roomID }
    let a: TestPeer
    let b: TestPeer
    private var pushesDelivered = 0

    /// `lan` latency with APNs-style coalescing (one pending notification per device), so a
    /// flood of saves cannot overflow a device's notification stream between two steps.
    static let lanCoalesced = PushProfile(
        name: "lan-coalesced", latency: .uniform(.microseconds(50), .microseconds(400)), coalescing: true)

    /// User IDs that sort A first: A is the offer creator (impolite), B polite.
    static let userA = "_a11ce"
    static let userB = "_b0b"

    init(a configA: SignalingConfiguration = .standard(), b configB: SignalingConfiguration = .standard(),
         push: PushProfile = CallHarness.lanCoalesced, users: (String, String) = (userA, userB),
         storeConfiguration: StoreConfiguration = .default, epochClocks: (EpochClock, EpochClock) = (.init(), .init()),
         start: Instant = .seconds(1_700_000_000)) async throws {
        clock = ManualClock(start: start)
        var options = EmbeddedStore.Options.inMemoryForTests
        options.pushProfile = push
        options.configuration = storeConfiguration
        let store = try EmbeddedStore(options: options, clock: clock)
        self.store = store
        let roomID = try! RoomID("room_test0001")
        func peer(_ user: String, _ role: RoomRole, _ config: SignalingConfiguration, _ remote: String,
                  _ clock: EpochClock, seed: UInt64, octet: UInt8) async throws -> TestPeer {
            let client = store.client(user: user, deviceID: "phone")
            let setup = RoomSetup(roomID: roomID, role: role, myUserID: user, displayName: user, roomName: "test")
            let binding = try await client.setUp(setup).get()
            let signaling = try CallSignaling(configuration: config, binding: binding, myUserID: user,
                                              remoteUserID: remote, epochClock: clock, seed: seed)
            let driver = CallDriver(signaling: signaling, client: client)
            try await driver.listenForPush()
            return TestPeer(userID: user, client: client, binding: binding, driver: driver,
                            ice: FakeICE(hostOctet: octet), seed: seed)
        }
        a = try await peer(users.0, .owner, configA, users.1, epochClocks.0, seed: 11, octet: 10)
        b = try await peer(users.1, .participant(ownerUserID: users.0), configB, users.0, epochClocks.1,
                           seed: 22, octet: 20)
    }

    deinit {
        a.driver.stop()
        b.driver.stop()
        store.close()
    }

    var now: Instant { clock.now() }
    var peers: [TestPeer] { [a, b] }

    /// Both peers start the call (A first).
    func startCall() async {
        for peer in peers { await peer.send(.start, now: now) }
    }

    /// Moves time by `dt`, delivers the pushes due, and lets each peer and its ICE run.
    func step(_ dt: Duration = .milliseconds(100)) async {
        clock.advance(by: dt)
        await deliverPushes()
        for peer in peers where !peer.paused { await peer.process(await peer.driver.tick(now: now), now: now) }
        for (peer, other) in [(a, b), (b, a)] where !peer.paused {
            for event in peer.ice.tick(now: now, peer: other.ice) { await peer.send(.ice(event), now: now) }
        }
    }

    /// Steps until `done` holds or `limit` has passed; returns whether `done` held.
    @discardableResult
    func run(for limit: Duration, step dt: Duration = .milliseconds(100),
             until done: () -> Bool = { false }) async -> Bool {
        let end = now + limit
        while now < end {
            if done() { return true }
            await step(dt)
        }
        return done()
    }

    /// True when both peers' ICE is connected on the same epoch and both negotiators say so.
    var converged: Bool {
        guard let e = a.ice.connectedEpoch, b.ice.connectedEpoch == e else { return false }
        return a.state == .connected(e) && b.state == .connected(e)
    }

    /// Runs until converged (at most `limit`).
    @discardableResult
    func connect(within limit: Duration = .seconds(30)) async -> Bool {
        await run(for: limit) { converged }
    }

    /// Pumps the push hub and waits (yielding, never sleeping) until every notification it
    /// delivered sits in a mailbox.
    func deliverPushes() async {
        pushesDelivered += store.pumpPush()
        var spins = 0
        while peers.reduce(0, { $0 + ($1.driver.mailbox?.received ?? 0) }) < pushesDelivered {
            spins += 1
            if spins > 1_000_000 {
                let received = peers.map { $0.driver.mailbox?.received ?? 0 }
                Issue.record(Comment(rawValue: "push notifications never reached the mailboxes: "
                                     + "\(pushesDelivered) delivered, \(received) received"))
                return
            }
            await Task.yield()
        }
    }

    /// A new call on the same devices: fresh signaling machines (new inbox; the change tokens
    /// only if `keepTokens`) that keep the devices' epoch clocks unless told otherwise, fresh ICE.
    func newCall(a configA: SignalingConfiguration? = nil, b configB: SignalingConfiguration? = nil,
                 epochClocks: (EpochClock, EpochClock)? = nil, keepTokens: Bool = false) throws {
        for (peer, config, other, index) in [(a, configA, b, 0), (b, configB, a, 1)] {
            peer.seed += 100
            let clock = epochClocks.map { index == 0 ? $0.0 : $0.1 } ?? peer.negotiator.epochClock
            let signaling = try CallSignaling(
                configuration: config ?? peer.signaling.configuration, binding: peer.binding, myUserID: peer.userID,
                remoteUserID: other.userID, epochClock: clock, seed: peer.seed,
                tokens: keepTokens ? peer.signaling.tokens : [])
            peer.driver.replace(signaling)
            var ice = FakeICE(hostOctet: peer.ice.hostOctet)
            ice.sendsEndOfCandidates = peer.ice.sendsEndOfCandidates
            peer.ice = ice
        }
    }

    /// Saves records as `peer` (overwriting: these are test fixtures), at most 200 a request.
    func save(_ records: [Record], as peer: TestPeer) async throws {
        for start in stride(from: 0, to: records.count, by: 200) {
            let batch = Array(records[start..<min(start + 200, records.count)])
            try await peer.client.save(batch, scope: peer.binding.scope, policy: .allKeys)
        }
    }

    /// Every record in the room's zone now, as `peer` sees it.
    func zoneRecords(as peer: TestPeer) async throws -> [Record] {
        try await peer.client.fetchAllZoneChanges(peer.binding.zone, since: nil, scope: peer.binding.scope).changed
    }

    /// The session record as it stands.
    func sessionRecord() async throws -> SignalSession? {
        let id = RecordID(recordName: a.negotiator.names.session, zoneID: a.binding.zone)
        guard let record = try await a.client.lookupRecords([id], scope: .private).first?.record else { return nil }
        return try SignalSession(decoding: record)
    }

    /// Every record in the room's zone now, as the owner sees it.
    func zoneRecords() async throws -> [Record] {
        try await a.client.fetchAllZoneChanges(a.binding.zone, since: nil, scope: .private).changed
    }
}
