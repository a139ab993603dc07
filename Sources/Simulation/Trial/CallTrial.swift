// One simulated call: two peers each running the real `PeerCall` (the negotiator, inbox and
// change sync of `CallSignaling`, and per epoch an `ICETransport` — ICE agent and TURN client),
// a real `StoreEngine` and `PushDeliveryModel` behind `SimulatedStore`, and a real `TURNServer`
// on a relay host — all on the scheduler's virtual clock and the virtual network. The trial is
// only the driver: it moves datagrams, store requests, replies and pushes between the machines,
// at the instants the network, store and push models give, and records each step in the trace.
// A trial that hangs up runs on until both calls are closed (every transport drained, TURN
// allocations deleted) and the store has answered what they asked for.
import ICE
import Peer
import RecordStore
import Signaling
import TURN
import ZoneCore

/// A simulated call between two peers, from the call's start to convergence or the deadline (and,
/// hanging up, to both calls closed). Noncopyable, as the calls it drives are.
public struct CallTrial: ~Copyable {
    /// Whether peers' ICE gathers relayed candidates from the relay (the TURN server on the relay
    /// host, which is also their STUN server) when the configuration offers it. Without relayed
    /// candidates, trials whose peers both map per remote endpoint (symmetric NATs) cannot connect.
    public static let relaysGathered = true

    /// The offer creator (lower user ID) and the answerer.
    public static let users = ("_a11ce", "_b0b")
    static let device = "phone"
    static let roomName = "room_sim00001"
    /// Where trials start: a fixed instant, so epochs and old records look the same every trial.
    public static let start = Instant.seconds(1_700_000_000)
    static let relayAddress = IPAddress.v4(0xCB00_7164)  // 203.0.113.100
    static let relayPort: UInt16 = 3478
    static let turnUser = ("sim", "simulated-relay-password")

    /// What the scheduler holds. The store cases are indirect: a request or an outcome is large,
    /// and only a tenth of the events carry one.
    private enum Event {
        case start(Int)
        case wake(Int)
        /// A datagram on its way.
        case datagram(Flight)
        indirect case storeArrival(Int, StoreRequest, CallSignaling.Origin, reply: Duration)
        indirect case storeReply(Int, CallSignaling.Origin, StoreOutcome)
        case push
        case relayTimer
    }

    /// A datagram on its way, with the fingerprint its send recorded: the network never changes a
    /// payload, so its delivery records the same one without a second pass over the bytes.
    private struct Flight {
        var datagram: Datagram
        var fingerprint: UInt64
    }

    /// A peer of the call: its call machine, and the driver's bookkeeping for it.
    private struct Participant: ~Copyable {
        let user: String
        var call: PeerCall
        let host: HostID
        let socket: Endpoint
        var wakeAt: Instant?
        /// Store requests asked for and not yet answered.
        var storeRequestsOut = 0
    }

    public let configuration: TrialConfiguration
    public let index: Int
    public let seed: UInt64
    private var scheduler: EventScheduler<Event>
    private var network: VirtualNetwork
    private var store: SimulatedStore
    private var relay: TURNServer
    private let relayHost: HostID
    private let relayListen: Endpoint
    /// The relay's open relayed endpoints: one or two per call, so a list, searched.
    private var relayEndpoints: [Endpoint] = []
    private var relayWakeAt: Instant?
    private var pushWakeAt: Instant?
    private var peers: InlineArray<2, Participant>
    private var trace: EventTrace
    private var convergedAt: Instant?
    private var convergedEpoch: CallEpoch?
    private var firstPush: Duration?
    private var firstPoll: Duration?

    /// Sets the scene — or takes `scene`, made once for many trials of the same configuration — and
    /// the network and both peers, ready to start.
    public init(configuration: TrialConfiguration, index: Int, seed: UInt64, scene: TrialScene? = nil) throws {
        // Everything that can throw is made before the trial's own properties are set: a
        // noncopyable value is never left half made.
        var random = SeededRandom(seed: seed)
        let start = CallTrial.start
        var trace = EventTrace(origin: start, capturesText: configuration.traceText)
        trace.record(.trialStart, at: start, actor: 0, UInt64(index), seed,
                     text: "\(index) seed \(seed) \(configuration.signaling.name) nat \(configuration.nat) "
                         + "push \(configuration.push.name) loss \(configuration.push.dropProbability)")

        // The network: the relay, then each peer on its link, behind its NAT if it has one.
        var network = VirtualNetwork(seed: random.next())
        let relayHost = network.addHost("relay", address: CallTrial.relayAddress, link: configuration.relayLink)
        let relayListen = Endpoint(address: CallTrial.relayAddress, port: CallTrial.relayPort)
        var turnConfiguration = TURNServerConfiguration(
            realm: "zonertc.sim", authentication: .users([CallTrial.turnUser.0: CallTrial.turnUser.1]),
            relayAddress: CallTrial.relayAddress,
            nonceKey: (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        turnConfiguration.software = "ZoneRTC simulated relay"
        let relay = TURNServer(configuration: turnConfiguration, seed: random.next())

        // The store: the room, devices and old records of the scene, behind latency and faults.
        let sceneSeed = random.next()
        let scene = try scene.flatMap { $0.isShareable ? $0 : nil }
            ?? TrialScene(configuration: configuration, seed: sceneSeed)
        let store = SimulatedStore(engine: scene.engine, pushProfile: configuration.push,
                                   latency: configuration.storeLatency, faults: configuration.faults, origin: start,
                                   seed: random.next())
        let (userA, userB) = CallTrial.users
        let (bindingA, bindingB) = (scene.offerCreator, scene.answerer)

        // The peers. They share one payload cache: each reads the other's descriptions and
        // candidates as the values they were printed from, rather than parsing this process's text.
        var signaling = configuration.signaling
        signaling.negotiator.payloads = SignalPayloadCache()
        let stunServers = [relayListen]
        let sides = [(userA, bindingA, userB), (userB, bindingB, userA)]
        let peers = try InlineArray<2, Participant> { (n: Int) throws -> Participant in
            let (user, binding, remote) = sides[n]
            let octet = UInt32(n == 0 ? 10 : 20)
            let publicAddress = IPAddress.v4(0xC633_6400 | octet)  // 198.51.100.10 / .20
            let host: HostID
            let local: IPAddress
            if let behavior = n == 0 ? configuration.nat.a : configuration.nat.b {
                local = .v4(0x0A00_0002 | UInt32(n + 1) << 16)  // 10.1.0.2 / 10.2.0.2
                host = network.addHost(user, address: local, link: configuration.link, behind: behavior,
                                       publicAddress: publicAddress)
            } else {
                local = publicAddress
                host = network.addHost(user, address: local, link: configuration.link)
            }
            let socket = Endpoint(address: local, port: UInt16(50_000 + n * 2))
            let relays = configuration.offerRelay && CallTrial.relaysGathered
                ? [TURNServerCredentials(server: relayListen, username: CallTrial.turnUser.0,
                                         password: CallTrial.turnUser.1)]
                : []
            let transport = PeerTransportConfiguration(hostAddresses: [socket], stunServers: stunServers,
                                                       turnServers: relays)
            let call = try PeerCall(
                configuration: PeerCallConfiguration(myUserID: user, remoteUserID: remote,
                                                     signaling: signaling, transport: transport,
                                                     seed: random.next()),
                binding: binding)
            return Participant(user: user, call: call, host: host, socket: socket, wakeAt: nil)
        }

        self.configuration = configuration
        self.index = index
        self.seed = seed
        self.trace = trace
        self.network = network
        self.relayHost = relayHost
        self.relayListen = relayListen
        self.relay = relay
        self.store = store
        self.peers = peers
        scheduler = EventScheduler(start: start)
        scheduler.schedule(.start(0), at: start)
        scheduler.schedule(.start(1), at: start)
    }

    /// The longest a trial that hangs up waits for both calls to close: every wait is bounded.
    public static let closingLimit: Duration = .seconds(120)

    /// Runs the call until both peers are connected on one epoch (and `hold` longer), or the
    /// deadline passes. With `hangUp`, both peers then hang up and the trial runs on until both
    /// calls are closed and the store has answered every request they made (or `closingLimit`).
    public mutating func run(hold: Duration = .zero, hangUp: Bool = false) -> TrialOutcome {
        let start = CallTrial.start
        var limit = start + configuration.deadline
        while true {
            if let convergedAt, limit > convergedAt + hold { limit = convergedAt + hold }
            guard let event = scheduler.next(notAfter: limit) else { break }
            handle(event)
        }
        if convergedAt == nil {
            scheduler.advance(to: limit)
            trace.record(.deadline, at: limit, actor: 0, text: "not connected on one epoch within "
                         + SimulationDuration.format(configuration.deadline))
        }
        let path: PathKind? = peers[0].call.report.lastSelectedPair.flatMap { pair in
            convergedAt == nil ? nil : pair.local.kind == .relay || pair.remote.kind == .relay ? .relayed : .direct
        }
        let closing = hangUp ? hangUpAndClose() : nil
        var counters: [SignalingCounters] = []
        for i in peers.indices { counters.append(peers[i].call.signaling.counters) }
        return TrialOutcome(
            index: index, seed: seed, convergence: convergedAt.map { $0 - start }, epoch: convergedEpoch, path: path,
            peers: counters, firstPush: firstPush, firstPoll: firstPoll,
            network: network.counters, store: store.counters, relay: relay.counters, events: scheduler.processed,
            trace: trace, closing: closing, relayAllocationsLeft: relay.activeAllocations)
    }

    /// Both peers hang up; runs until both calls are closed and their store requests answered.
    /// Returns how long that took (nil when `closingLimit` passed first).
    private mutating func hangUpAndClose() -> Duration? {
        let hungUpAt = scheduler.now
        for i in peers.indices {
            trace.record(.hangUp, at: hungUpAt, actor: UInt8(i + 1))
            feed(i, .hangUp)
        }
        let limit = hungUpAt + Self.closingLimit
        while !bothClosed(), let event = scheduler.next(notAfter: limit) {
            handle(event)
        }
        guard bothClosed() else {
            trace.record(.deadline, at: limit, actor: 0, text: "not closed within "
                         + SimulationDuration.format(Self.closingLimit) + " of hanging up")
            return nil
        }
        trace.record(.closed, at: scheduler.now, actor: 0)
        return scheduler.now - hungUpAt
    }

    /// Both calls closed and nothing of theirs left at the store.
    private mutating func bothClosed() -> Bool {
        peers.indices.allSatisfy { peers[$0].call.isClosed && peers[$0].storeRequestsOut == 0 }
    }

    // MARK: Events

    private mutating func handle(_ event: consuming Event) {
        let now = scheduler.now
        switch consume event {
        case .start(let i):
            trace.record(.callStart, at: now, actor: UInt8(i + 1))
            feed(i, .start)
        case .wake(let i):
            guard peers[i].wakeAt == now else { return }  // superseded by an earlier wake
            peers[i].wakeAt = nil
            feed(i, .timer, polling: true)
        case .datagram(let flight):
            let datagram = flight.datagram
            switch network.deliver(datagram, now: now) {
            case .failure(let reason):
                trace.record(.datagramDropped, at: now, actor: 5, UInt64(reason.rawValue),
                             EventTrace.pack(datagram.source), EventTrace.pack(datagram.destination),
                             text: "\(reason) \(datagram.source) > \(datagram.destination)")
            case .success(let delivery):
                deliver(datagram.payload, delivery, fingerprint: flight.fingerprint, now: now)
            }
        case .storeArrival(let i, let request, let origin, let reply):
            let outcome = store.execute(request, user: peers[i].user, device: CallTrial.device, now: now)
            trace.record(.storeReply, at: now, actor: 3, UInt64(i + 1), Self.code(of: outcome), Self.size(of: outcome),
                         text: "to \(i == 0 ? "A" : "B"): \(Self.describe(outcome))")
            scheduler.schedule(.storeReply(i, origin, outcome), after: reply)
            schedulePush()
        case .storeReply(let i, let origin, let outcome):
            peers[i].storeRequestsOut -= 1
            feed(i, .signaling(.reply(origin, outcome)))
        case .push:
            pushWakeAt = nil
            for note in store.duePushes(now: now) {
                guard let i = peers.indices.first(where: { peers[$0].user == note.userRecordName }) else { continue }
                trace.record(.pushDelivered, at: now, actor: UInt8(i + 1), note.notification.notificationID)
                if firstPush == nil { firstPush = now - CallTrial.start }
                feed(i, .signaling(.notification(note.notification)))
            }
            schedulePush()
        case .relayTimer:
            relayWakeAt = nil
            runRelay(.timer, now: now)
            scheduleRelay()
        }
    }

    private mutating func deliver(_ payload: [UInt8], _ arrival: Delivery, fingerprint: UInt64, now: Instant) {
        if arrival.host == relayHost {
            trace.record(.datagramDelivered, at: now, actor: 4, EventTrace.pack(arrival.from),
                         EventTrace.pack(arrival.to),
                         fingerprint, text: "\(arrival.from) > \(arrival.to)")
            if arrival.to == relayListen {
                runRelay(.clientDatagram(payload, from: arrival.from, to: arrival.to), now: now)
            } else if relayEndpoints.contains(arrival.to) {
                runRelay(.peerDatagram(payload, from: arrival.from, relay: arrival.to), now: now)
            }
            scheduleRelay()
            return
        }
        guard let i = peers.indices.first(where: { peers[$0].host == arrival.host }), arrival.to == peers[i].socket
        else {
            trace.record(.datagramDropped, at: now, actor: 5, 4, EventTrace.pack(arrival.from),
                         EventTrace.pack(arrival.to), text: "no socket at \(arrival.to)")
            return
        }
        trace.record(.datagramDelivered, at: now, actor: UInt8(i + 1), EventTrace.pack(arrival.from),
                     EventTrace.pack(arrival.to), fingerprint,
                     text: "\(arrival.from) > \(arrival.to) \(payload.count) bytes")
        feed(i, .datagram(payload, from: arrival.from, to: arrival.to))
    }

    // MARK: Peers

    /// Feeds an input to peer `i`'s call and carries out everything it asks for. `polling` marks
    /// a timer: fetches it starts are polls.
    private mutating func feed(_ i: Int, _ input: PeerCall.Input, polling: Bool = false) {
        let now = scheduler.now
        peers[i].call.handle(input, now: now)
        while let output = peers[i].call.pollOutput() {
            carryOut(output, of: i, polling: polling, now: now)
        }
        scheduleWake(i)
    }

    /// Carries out one output of peer `i`'s call.
    private mutating func carryOut(_ output: consuming PeerCall.Output, of i: Int, polling: Bool, now: Instant) {
        switch consume output {
        case .store(let request, let origin):
            if polling, firstPoll == nil, case .path = origin, Self.isFetch(request) {
                firstPoll = now - CallTrial.start
            }
            peers[i].storeRequestsOut += 1
            let (arrival, reply) = store.timing(client: peers[i].user, now: now)
            trace.record(.storeRequest, at: now, actor: UInt8(i + 1), Self.code(of: request.operation),
                         Self.size(of: request.operation), text: Self.describe(request.operation))
            scheduler.schedule(.storeArrival(i, request, origin, reply: reply), at: arrival)
        case .transmit(let bytes, let from, let to):
            send(bytes, from: from, to: to, host: peers[i].host, actor: UInt8(i + 1))
        case .event(let event):
            switch event {
            case .callState(let state):
                trace.record(.callState, at: now, actor: UInt8(i + 1), Self.code(of: state),
                             UInt64(bitPattern: state.epoch?.milliseconds ?? 0), text: "\(state)")
                checkConvergence(now: now)
            case .iceState(let state):
                trace.record(.iceEvent, at: now, actor: UInt8(i + 1), 1, Self.code(of: state),
                             text: "ICE \(state)")
            case .selectedPair(let pair):
                trace.record(.iceEvent, at: now, actor: UInt8(i + 1), 2, EventTrace.pack(pair.local.address),
                             EventTrace.pack(pair.remote.address), text: "selected \(pair)")
            case .relay(let what):
                trace.record(.iceEvent, at: now, actor: UInt8(i + 1), 3, text: "relay \(what)")
            case .zoneUnavailable(let why):
                trace.record(.zoneUnavailable, at: now, actor: UInt8(i + 1), text: why)
            case .rejectedRecord(let why):
                trace.record(.iceEvent, at: now, actor: UInt8(i + 1), 4, text: "rejected \(why)")
            case .remoteHungUp(let why):
                trace.record(.remoteHungUp, at: now, actor: UInt8(i + 1), text: why)
            case .frame, .mediaFinished, .ended, .sendFailed:
                break
            }
        }
    }

    private mutating func checkConvergence(now: Instant) {
        guard convergedAt == nil, case .connected(let e) = peers[0].call.signaling.negotiator.state,
              peers[1].call.signaling.negotiator.state == .connected(e)
        else { return }
        convergedAt = now
        convergedEpoch = e
        trace.record(.converged, at: now, actor: 0, UInt64(bitPattern: e.milliseconds), text: "epoch \(e)")
    }

    // MARK: Timers

    private mutating func scheduleWake(_ i: Int) {
        let now = scheduler.now
        guard var next = peers[i].call.nextDeadline else { return }
        // A deadline already past was missed by the machine itself; look again shortly rather
        // than spin at one instant.
        if next <= now { next = now + .milliseconds(1) }
        if let current = peers[i].wakeAt, current <= next, current > now { return }
        peers[i].wakeAt = next
        scheduler.schedule(.wake(i), at: next)
    }

    private mutating func schedulePush() {
        guard let next = store.nextPushDeadline else { return }
        if let current = pushWakeAt, current <= next { return }
        pushWakeAt = next
        scheduler.schedule(.push, at: next)
    }

    private mutating func scheduleRelay() {
        guard let next = relay.nextDeadline else { return }
        if let current = relayWakeAt, current <= next { return }
        relayWakeAt = next
        scheduler.schedule(.relayTimer, at: next)
    }

    // MARK: Network

    /// Takes the payload from the output or action it came in: it travels on as the flight's.
    private mutating func send(_ bytes: consuming [UInt8], from: Endpoint, to: Endpoint, host: HostID, actor: UInt8) {
        let now = scheduler.now
        switch network.transmit(bytes, from: from, to: to, host: host, now: now) {
        case .failure(let reason):
            trace.record(.datagramDropped, at: now, actor: actor, UInt64(reason.rawValue), EventTrace.pack(from),
                         EventTrace.pack(to), text: "\(reason) \(from) > \(to)")
        case .success(let copies):
            let fingerprint = EventTrace.fingerprint(bytes)
            trace.record(.datagramSent, at: now, actor: actor, EventTrace.pack(from), EventTrace.pack(to),
                         fingerprint, text: "\(from) > \(to) \(bytes.count) bytes")
            let flight = Flight(datagram: copies.datagram(carrying: consume bytes), fingerprint: fingerprint)
            guard let duplicateAt = copies.duplicateAt else {
                scheduler.schedule(.datagram(consume flight), at: copies.at)
                return
            }
            scheduler.schedule(.datagram(flight), at: copies.at)
            scheduler.schedule(.datagram(flight), at: duplicateAt)
        }
    }

    private mutating func runRelay(_ input: TURNServer.Input, now: Instant) {
        relay.handle(input, now: now)
        while let action = relay.pollOutput() {
            relayAction(action)
        }
    }

    /// Carries out one action of the relay.
    @inline(never)
    private mutating func relayAction(_ action: consuming TURNServer.Action) {
        switch consume action {
        case .toClient(let bytes, let client, let via):
            send(bytes, from: via, to: client, host: relayHost, actor: 4)
        case .toPeer(let bytes, let from, let to):
            send(bytes, from: from, to: to, host: relayHost, actor: 4)
        case .openRelay(let endpoint, let response, let client, let via):
            if !relayEndpoints.contains(endpoint) { relayEndpoints.append(endpoint) }
            send(response, from: via, to: client, host: relayHost, actor: 4)
        case .closeRelay(let endpoint):
            relayEndpoints.removeAll { $0 == endpoint }
        case .event:
            break
        }
    }

    // MARK: Trace codes

    private static func isFetch(_ request: StoreRequest) -> Bool {
        switch request.operation {
        case .fetchZoneChanges, .fetchDatabaseChanges: return true
        default: return false
        }
    }

    private static func code(of operation: StoreRequest.Operation) -> UInt64 {
        switch operation {
        case .modifyRecords: 1
        case .lookupRecords: 2
        case .fetchZoneChanges(_, let since, _): since == nil ? 3 : 4
        case .fetchDatabaseChanges: 5
        case .createZone: 6
        case .createShare: 7
        case .fetchShare: 8
        case .acceptShare: 9
        case .saveSubscription: 10
        }
    }

    private static func size(of operation: StoreRequest.Operation) -> UInt64 {
        switch operation {
        case .modifyRecords(let r): UInt64(r.saveCount << 16 | r.deleteCount)
        case .lookupRecords(let ids): UInt64(ids.count)
        default: 0
        }
    }

    private static func describe(_ operation: StoreRequest.Operation) -> String {
        switch operation {
        case .modifyRecords(let r):
            "modify " + r.operations.map { ($0.isDelete ? "-" : "") + $0.recordID.recordName }.joined(separator: " ")
        case .lookupRecords(let ids): "lookup " + ids.map(\.recordName).joined(separator: " ")
        case .fetchZoneChanges(_, let since, _): since == nil ? "zone changes (all)" : "zone changes since token"
        case .fetchDatabaseChanges(let since): since == nil ? "database changes (all)" : "database changes since token"
        default: "\(operation)"
        }
    }

    private static func code(of outcome: StoreOutcome) -> UInt64 {
        switch outcome {
        case .modified: 1
        case .lookedUp: 2
        case .zoneChanges: 3
        case .databaseChanges: 4
        case .zones: 5
        case .share: 6
        case .subscriptions: 7
        case .failed(let error): 100 + UInt64(StoreError.Code.allCases.firstIndex(of: error.code) ?? 99)
        }
    }

    private static func size(of outcome: StoreOutcome) -> UInt64 {
        switch outcome {
        case .modified(let r): UInt64(r.results.count)
        case .lookedUp(let r): UInt64(r.count)
        case .zoneChanges(let c): UInt64(c.changed.count << 16 | c.deleted.count)
        case .databaseChanges(let c): UInt64(c.changedZones.count)
        default: 0
        }
    }

    private static func describe(_ outcome: StoreOutcome) -> String {
        switch outcome {
        case .modified(let r):
            "modified: " + r.results.map { result in
                if let error = result.error { return "\(result.recordID.recordName) failed \(error.code)" }
                return result.recordID.recordName
            }.joined(separator: " ")
        case .lookedUp(let r): "looked up \(r.compactMap(\.record).count) of \(r.count)"
        case .zoneChanges(let c):
            "zone changes: \(c.changed.count) records, \(c.deleted.count) deleted" + (c.moreComing ? ", more" : "")
        case .databaseChanges(let c): "database changes: \(c.changedZones.count) zones"
        case .failed(let error): "failed \(error)"
        default: "\(outcome)"
        }
    }

    private static func code(of state: CallState) -> UInt64 {
        switch state {
        case .idle: 0
        case .preparing: 1
        case .waitingForOffer: 2
        case .offering: 3
        case .connecting: 4
        case .connected: 5
        case .ended: 6
        }
    }

    private static func code(of state: ConnectionState) -> UInt64 {
        switch state {
        case .new: 0
        case .checking: 1
        case .connected: 2
        case .completed: 3
        case .disconnected: 4
        case .failed: 5
        case .closed: 6
        }
    }
}
