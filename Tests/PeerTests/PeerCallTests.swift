// Two `PeerCall`s in one in-memory store on a manual clock, their datagrams carried in memory:
// real signaling records, real ICE checks, no sockets, no sleeps.
import Foundation
import ICE
import Media
import Peer
import RecordStore
import Signaling
import Testing
import ZoneCore

final class MemoryPeer {
    let client: EmbeddedStoreClient
    var call: PeerCall
    let mailbox = NotificationMailbox()
    var states: [CallState] = []
    var frames: [VideoFrameRecord] = []
    var finished = false

    struct VideoFrameRecord: Equatable { var pts: Int64; var bytes: [UInt8] }

    init(client: EmbeddedStoreClient, call: PeerCall) {
        self.client = client
        self.call = call
    }
}

final class MemoryCallHarness {
    let clock: ManualClock
    let store: EmbeddedStore
    let a: MemoryPeer
    let b: MemoryPeer
    var pushesDelivered = 0
    /// Datagrams in flight: (deliver at, bytes, from, to).
    var wire: [(at: Instant, bytes: [UInt8], from: Endpoint, to: Endpoint)] = []
    var latency: Duration = .microseconds(100)
    /// Every datagram either peer sent, in order.
    var carried: [[UInt8]] = []

    init(strategy: SyncStrategy = .hybrid, media: (CallMediaConfiguration, CallMediaConfiguration) = (.init(), .init()),
         lifetime: CallLifetime = CallLifetime(),
         security: (MediaSecurity, MediaSecurity) = (.none, .none)) async throws
    {
        clock = ManualClock(start: .seconds(1_700_000_000))
        var options = EmbeddedStore.Options.inMemoryForTests
        options.pushProfile = PushProfile(name: "lan-test", latency: .uniform(.microseconds(50), .microseconds(400)),
                                          coalescing: true)
        let store = try EmbeddedStore(options: options, clock: clock)
        self.store = store
        let room = try RoomID("room_peer0001")
        func peer(_ user: String, _ role: RoomRole, _ remote: String, port: UInt16, seed: UInt64,
                  security: MediaSecurity,
                  media: CallMediaConfiguration) async throws -> MemoryPeer {
            let client = store.client(user: user, deviceID: "dev")
            let setup = RoomSetup(roomID: room, role: role, myUserID: user, displayName: user, roomName: "t")
            let binding = try await client.setUp(setup).get()
            var configuration = PeerCallConfiguration(
                myUserID: user, remoteUserID: remote, signaling: .standard(strategy),
                transport: PeerTransportConfiguration(hostAddresses: [Endpoint(address: .loopbackV4, port: port)]),
                media: media, lifetime: lifetime, seed: seed)
            configuration.mediaSecurity = security
            let peer = MemoryPeer(client: client, call: try PeerCall(configuration: configuration, binding: binding))
            peer.mailbox.collect(try await client.notifications())
            return peer
        }
        a = try await peer("_alice", .owner, "_bob", port: 41000, seed: 1, security: security.0, media: media.0)
        b = try await peer("_bob", .participant(ownerUserID: "_alice"), "_alice", port: 42000, seed: 2,
                           security: security.1, media: media.1)
    }

    deinit {
        a.mailbox.stop()
        b.mailbox.stop()
        store.close()
    }

    var now: Instant { clock.now() }

    func feed(_ peer: MemoryPeer, _ input: PeerCall.Input) async {
        peer.call.handle(input, now: now)
        await drain(peer)
    }

    func drain(_ peer: MemoryPeer) async {
        while let output = peer.call.pollOutput() {
            switch output {
            case .store(let request, let origin):
                let outcome = await peer.client.perform(request)
                peer.call.handle(.signaling(.reply(origin, outcome)), now: now)
            case .transmit(let bytes, let from, let to):
                carried.append(bytes)
                wire.append((now + latency, bytes, from, to))
            case .event(.callState(let state)):
                peer.states.append(state)
            case .event(.frame(let frame)):
                peer.frames.append(.init(pts: frame.pts, bytes: frame.bytes))
            case .event(.mediaFinished):
                peer.finished = true
            case .event:
                break
            }
        }
    }

    /// Delivers pushes, due datagrams and timers, then moves the clock to the next thing due.
    func step() async {
        pushesDelivered += store.pumpPush()
        var spins = 0
        while a.mailbox.received + b.mailbox.received < pushesDelivered && spins < 1_000_000 {
            spins += 1
            await Task.yield()
        }
        for peer in [a, b] {
            for note in peer.mailbox.drain() { await feed(peer, .signaling(.notification(note))) }
        }
        let due = wire.filter { $0.at <= now }
        wire.removeAll { $0.at <= now }
        for d in due {
            let peer = d.to.port == 41000 ? a : b
            await feed(peer, .datagram(d.bytes, from: d.from, to: d.to))
        }
        for peer in [a, b] {
            if let deadline = peer.call.nextDeadline, deadline <= now { await feed(peer, .timer) }
        }
        let next = ([a.call.nextDeadline, b.call.nextDeadline] + wire.map(\.at)).compactMap { $0 }.min()
        let target = min(next ?? now + .milliseconds(1), now + .milliseconds(1))
        if target > now { clock.advance(by: target - now) }
    }

    func run(for limit: Duration, until done: () -> Bool) async -> Bool {
        let end = now + limit
        while now < end {
            if done() { return true }
            await step()
        }
        return done()
    }
}

@Suite struct PeerCallTests {
    @Test(arguments: [SyncStrategy.push, .pollToken, .hybrid])
    func twoPeersConnectThroughTheStoreWithRealICE(strategy: SyncStrategy) async throws {
        let h = try await MemoryCallHarness(strategy: strategy)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let connected = await h.run(for: .seconds(30)) {
            h.a.call.selectedPair != nil && h.b.call.selectedPair != nil
                && h.a.call.signaling.negotiator.state == h.b.call.signaling.negotiator.state
        }
        #expect(connected)
        let a = h.a.call, b = h.b.call
        #expect(a.selectedPair?.local.address.port == 41000)
        #expect(a.selectedPair?.remote.address.port == 42000)
        #expect(b.selectedPair?.remote.address.port == 41000)
        #expect(a.milestones.signalingComplete != nil && a.milestones.iceConnected != nil)
        #expect(a.signaling.counters.resets == 0)
        if case .connected = a.signaling.negotiator.state {} else { Issue.record("A is \(a.signaling.negotiator.state)") }
    }
}

@Suite struct PeerHangUpTests {
    /// Hanging up is the peer's goodbye through the store: its envelopes and candidate chunks of
    /// every epoch are deleted; the session record (the epoch clock of the pair) stays.
    @Test func hangUpDeletesOwnSignalRecords() async throws {
        let h = try await MemoryCallHarness(strategy: .push)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        _ = await h.run(for: .seconds(30)) { h.a.call.selectedPair != nil && h.b.call.selectedPair != nil }
        func signalRecords() -> [String: Int] {
            h.store.inspect().zones.reduce(into: [:]) { total, zone in
                for (type, n) in zone.recordsByType where type.hasPrefix("Signal") { total[type, default: 0] += n }
            }
        }
        let before = signalRecords()
        #expect((before["SignalEnvelope"] ?? 0) == 2)
        #expect((before["SignalIceChunk"] ?? 0) >= 2)
        await h.feed(h.a, .hangUp)
        await h.feed(h.b, .hangUp)
        let after = signalRecords()
        #expect(after["SignalEnvelope"] ?? 0 == 0)
        #expect(after["SignalIceChunk"] ?? 0 == 0)
        #expect(after["SignalSession"] == before["SignalSession"])
        #expect(h.a.call.signaling.counters.gcDeletions >= 2)
    }
}

@Suite struct PeerCallMediaTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// A's file reaches B frame for frame (same bytes, same timestamps) through the whole call
    /// machine: signaling records, ICE, RTP/RTCP on the selected pair.
    @Test(arguments: ["vp8-320x240-60.ivf", "h264-320x240-60.h264"])
    func fileArrivesIdentical(file: String) async throws {
        let (format, frames) = try VideoFileSource.read(path: Self.fixtures.appendingPathComponent(file).path)
        let send = CallMediaConfiguration(send: .init(format: format, frames: frames), pace: .max)
        let receive = CallMediaConfiguration(receive: true)
        let h = try await MemoryCallHarness(strategy: .push, media: (send, receive))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let done = await h.run(for: .seconds(60)) { h.a.finished && h.b.finished }
        #expect(done)
        #expect(h.b.frames.count == frames.count)
        #expect(h.b.frames.map(\.pts) == frames.map(\.pts))
        let a = h.a.call.media.stats, b = h.b.call.media.stats
        #expect(a.sentDigest != nil && a.sentDigest == b.receivedDigest)
        #expect(b.framesReceived == frames.count)
        #expect(h.b.call.milestones.firstFrame != nil)
    }
}

@Suite struct PeerCallLifetimeTests {
    /// The call decides when it ends, on its own deadlines: a peer whose partner never comes
    /// fails at the connect timeout and says why; it does not wait for its driver.
    @Test func connectTimeoutFailsTheCall() async throws {
        let h = try await MemoryCallHarness(strategy: .push, lifetime: CallLifetime(connectTimeout: .seconds(5)))
        await h.feed(h.a, .start)  // B never starts
        let ended = await h.run(for: .seconds(10)) { h.a.call.hasHungUp }
        #expect(ended)
        guard case .failed(let why) = h.a.call.ending else {
            Issue.record("A ended \(String(describing: h.a.call.ending))")
            return
        }
        #expect(why.contains("no connection within 5"))
        let waited = try #require(h.a.call.milestones.ended.flatMap { end in h.a.call.milestones.started.map { end - $0 } })
        #expect(waited >= .seconds(5) && waited < .seconds(6))
    }

    /// Held for its time after connecting, the call hangs up as completed (its goodbye deletes
    /// its records); media streams end the call when they are done.
    @Test func holdAfterConnectEndsTheCall() async throws {
        let h = try await MemoryCallHarness(strategy: .push, lifetime: CallLifetime(holdAfterConnect: .seconds(2)))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let ended = await h.run(for: .seconds(30)) { h.a.call.hasHungUp && h.b.call.hasHungUp }
        #expect(ended)
        #expect(h.a.call.ending == .completed && h.b.call.ending == .completed)
        let connected = try #require(h.a.call.milestones.iceConnected)
        let end = try #require(h.a.call.milestones.ended)
        #expect(end - connected >= .seconds(2) && end - connected < .milliseconds(2100))
    }
}
