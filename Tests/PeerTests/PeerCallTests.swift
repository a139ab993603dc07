// Two `PeerCall`s in one in-memory store on a manual clock, their datagrams carried by the shared
// `TestNetwork`: real signaling records, real ICE checks, no sockets, no sleeps.
import CallTestSupport
import Foundation
import ICE
import Media
import Peer
import RecordStore
import SDP
import Signaling
import TestNetwork
import TURN
import Testing
import ZoneCore

final class MemoryPeer {
    let client: EmbeddedStoreClient
    var call: PeerCall
    let mailbox = NotificationMailbox()
    var states: [CallState] = []
    var frames: [VideoFrameRecord] = []
    var finished = false
    /// The call's events that tell its course, in the order it reported them (`ice connected`,
    /// `selected`, `ended failed: …`), so tests can check what was seen and in which order.
    var course: [String] = []

    struct VideoFrameRecord: Equatable { var pts: Int64; var bytes: [UInt8] }

    init(client: EmbeddedStoreClient, call: consuming PeerCall) {
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
    /// Every datagram crosses loopback in `latency`.
    static let latency: Duration = .microseconds(100)
    /// Carries the datagrams; its clock follows `clock` (the store's).
    let net: TestNetwork
    /// Peers whose process is gone (kill -9): nothing is fed to them, datagrams to them vanish.
    var killed: Set<ObjectIdentifier> = []
    /// While true every datagram is lost (the path fails; the store still works).
    var partitioned = false
    /// Datagrams the wire loses: true drops it.
    var dropDatagram: ([UInt8]) -> Bool = { _ in false }
    /// Every datagram either peer sent, in order.
    var carried: [[UInt8]] = []
    /// The TURN server both peers relay through (`relayed`), on its own host of the network.
    private(set) var relay: TURNServer?
    /// The relayed endpoints the TURN server has open.
    private(set) var openRelays: Set<Endpoint> = []
    /// What the TURN server reported (allocations made and released).
    private(set) var relayEvents: [TURNServer.Event] = []
    static let relayServer = Endpoint(address: .v4(0xCB00_7109), port: 3478)  // 203.0.113.9
    static let relayUser = (name: "relay", password: "relay-secret")

    /// `relayed`: both peers send only through a TURN server on its own host, whose link loses `relayLoss`
    /// of the datagrams (seeded).
    init(strategy: SyncStrategy = .hybrid, media: (CallMediaConfiguration, CallMediaConfiguration) = (.init(), .init()),
         lifetime: CallLifetime = CallLifetime(), consent: ConsentConfiguration = ConsentConfiguration(),
         dialect: SDPDialect = .zonertc,
         security: (MediaProtectionMode, MediaProtectionMode) = (.none, .none),
         relayed: Bool = false, relayLoss: Double = 0) async throws
    {
        clock = ManualClock(start: .seconds(1_700_000_000))
        net = TestNetwork(start: clock.now(), seed: 1, link: TestNetwork.link(path: MemoryCallHarness.latency))
        var turnServers: [TURNServerCredentials] = []
        if relayed {
            var c = TURNServerConfiguration(
                realm: "zone", authentication: .users([Self.relayUser.name: Self.relayUser.password]),
                relayAddress: Self.relayServer.address, nonceKey: [7, 7, 7])
            c.relayPorts = 50000...50099
            c.peerPolicy.allowLoopback = true
            relay = TURNServer(configuration: c, seed: 9)
            net.setLink(TestNetwork.link(path: MemoryCallHarness.latency, loss: relayLoss),
                        for: Self.relayServer.address)
            turnServers = [TURNServerCredentials(server: Self.relayServer, username: Self.relayUser.name,
                                                 password: Self.relayUser.password)]
        }
        var options = EmbeddedStore.Options.inMemoryForTests
        options.pushProfile = PushProfile(name: "lan-test", latency: .uniform(.microseconds(50), .microseconds(400)),
                                          coalescing: true)
        let store = try EmbeddedStore(options: options, clock: clock)
        self.store = store
        let room = try RoomID("room_peer0001")
        func peer(_ user: String, _ role: RoomRole, _ remote: String, port: UInt16, seed: UInt64,
                  security: MediaProtectionMode,
                  media: CallMediaConfiguration) async throws -> MemoryPeer {
            let client = store.client(user: user, deviceID: "dev")
            let setup = RoomSetup(roomID: room, role: role, myUserID: user, displayName: user, roomName: "t")
            let binding = try await client.setUp(setup).get()
            var signaling = SignalingConfiguration.standard(strategy)
            signaling.negotiator.dialect = dialect
            var configuration = PeerCallConfiguration(
                myUserID: user, remoteUserID: remote, signaling: signaling,
                transport: PeerTransportConfiguration(hostAddresses: [Endpoint(address: .loopbackV4, port: port)],
                                                      turnServers: turnServers, relayOnly: relayed, consent: consent),
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
                if !partitioned, !dropDatagram(bytes) { net.send(bytes, from: from, to: to) }
            case .event(.callState(let state)):
                peer.states.append(state)
            case .event(.frame(let frame)):
                peer.frames.append(.init(pts: frame.pts, bytes: frame.bytes))
            case .event(.mediaFinished):
                peer.finished = true
            case .event(.iceState(let state)):
                peer.course.append("ice \(state)")
            case .event(.selectedPair):
                peer.course.append("selected")
            case .event(.ended(let how)):
                peer.course.append("ended \(how)")
            case .event(.remoteHungUp(let why)):
                peer.course.append("remote \(why)")
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
        let running = [a, b].filter { !killed.contains(ObjectIdentifier($0)) }
        for peer in running {
            for note in peer.mailbox.drain() { await feed(peer, .signaling(.notification(note))) }
        }
        net.advance(to: now)
        while let d = net.arrival(notAfter: now) {
            if d.to == Self.relayServer {
                runRelay(.clientDatagram(d.payload, from: d.from, to: d.to))
                continue
            }
            if openRelays.contains(d.to) {
                runRelay(.peerDatagram(d.payload, from: d.from, relay: d.to))
                continue
            }
            let peer = d.to.port == 41000 ? a : b
            guard !killed.contains(ObjectIdentifier(peer)) else { continue }
            await feed(peer, .datagram(d.payload, from: d.from, to: d.to))
        }
        for peer in running {
            if let deadline = peer.call.nextDeadline, deadline <= now { await feed(peer, .timer) }
        }
        if let deadline = relay?.nextDeadline, deadline <= now { runRelay(.timer) }
        let deadlines = running.map { $0.call.nextDeadline } + [net.nextArrival, relay?.nextDeadline]
        let next = deadlines.compactMap { $0 }.min()
        let target = min(next ?? now + .milliseconds(1), now + .milliseconds(1))
        if target > now { clock.advance(by: target - now) }
    }

    /// Whether no datagram is on its way.
    var wireIsEmpty: Bool { net.nextArrival == nil }

    /// Feeds the TURN server and carries out what it asks for (lost, like the peers' datagrams,
    /// while `partitioned`).
    private func runRelay(_ input: TURNServer.Input) {
        relay?.handle(input, now: now)
        while let action = relay?.pollOutput() {
            switch action {
            case .toClient(let bytes, let client, let via):
                if !partitioned { net.send(bytes, from: via, to: client) }
            case .toPeer(let bytes, let from, let to):
                if !partitioned { net.send(bytes, from: from, to: to) }
            case .openRelay(let endpoint, let response, let client, let via):
                openRelays.insert(endpoint)
                if !partitioned { net.send(response, from: via, to: client) }
            case .closeRelay(let endpoint):
                openRelays.remove(endpoint)
            case .event(let event):
                relayEvents.append(event)
            }
        }
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
        #expect(h.a.call.selectedPair?.local.address.port == 41000)
        #expect(h.a.call.selectedPair?.remote.address.port == 42000)
        #expect(h.b.call.selectedPair?.remote.address.port == 41000)
        #expect(h.a.call.milestones.signalingComplete != nil && h.a.call.milestones.iceConnected != nil)
        #expect(h.a.call.signaling.counters.resets == 0)
        let state = h.a.call.signaling.negotiator.state
        if case .connected = state {} else { Issue.record("A is \(state)") }
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
        // Host candidates only: gathering ends with them, so one chunk per side carries the
        // candidates and end-of-candidates together.
        #expect(before["SignalIceChunk"] == 2)
        await h.feed(h.a, .hangUp)
        await h.feed(h.b, .hangUp)
        let after = signalRecords()
        #expect(after["SignalEnvelope"] ?? 0 == 0)
        #expect(after["SignalIceChunk"] ?? 0 == 0)
        #expect(after["SignalSession"] == before["SignalSession"])
        #expect(h.a.call.signaling.counters.gcDeletions >= 2)
    }

    /// The other side reads the goodbye (docs/PROTOCOL.md §7): a call without media ends as planned
    /// as soon as the deletion is fetched — not when ICE consent runs out half a minute later.
    @Test(arguments: [SyncStrategy.push, .pollToken])
    func remoteGoodbyeEndsTheCall(strategy: SyncStrategy) async throws {
        let h = try await MemoryCallHarness(strategy: strategy)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        #expect(await h.run(for: .seconds(30)) { h.a.call.selectedPair != nil && h.b.call.selectedPair != nil })
        let hungUpAt = h.now
        await h.feed(h.a, .hangUp)
        #expect(await h.run(for: .seconds(10)) { h.b.call.hasHungUp }, "B never read A's goodbye")
        #expect(h.now - hungUpAt < .seconds(3))  // a poll interval at most, under poll-token
        #expect(h.b.call.ending == .completed)
        let remote = h.b.course.filter { $0.hasPrefix("remote ") }
        #expect(remote.count == 1 && remote[0].contains("_alice hung up (its offer of epoch"), "\(h.b.course)")
        // Reported first, then the end it causes.
        let told = h.b.course.firstIndex { $0.hasPrefix("remote ") }
        let ended = h.b.course.firstIndex(of: "ended completed")
        #expect(told != nil && ended != nil && told! < ended!, "\(h.b.course)")
    }

    /// A sender that hangs up mid-stream cuts the receiver's media short: the receiver's call fails
    /// and says how far the media got.
    @Test func remoteGoodbyeBeforeTheMediaEndedIsAFailure() async throws {
        let (format, frames) = try VideoFileSource.read(
            path: PeerCallMediaTests.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path)
        let send = CallMediaConfiguration(send: .init(format: format, frames: frames), pace: .realtime)
        let h = try await MemoryCallHarness(strategy: .push, media: (send, CallMediaConfiguration(receive: true)))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        #expect(await h.run(for: .seconds(30)) { h.b.frames.count >= 10 })
        await h.feed(h.a, .hangUp)
        #expect(await h.run(for: .seconds(10)) { h.b.call.hasHungUp })
        guard case .failed(let why) = h.b.call.ending else {
            Issue.record("B ended \(String(describing: h.b.call.ending))")
            return
        }
        #expect(why.contains("hung up") && why.contains("before the media ended"), "\(why)")
        #expect(h.b.frames.count < frames.count)
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

    /// A's file plays 2 s in real time.
    static func realtimeFile() throws -> CallMediaConfiguration {
        let path = PeerCallMediaTests.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let (format, frames) = try VideoFileSource.read(path: path)
        return CallMediaConfiguration(send: .init(format: format, frames: frames), pace: .realtime)
    }

    /// A stream whose sender never says BYE (a browser's looping camera) ends after the frames the
    /// receiver was told to expect, and the call completes then instead of at a fixed time.
    @Test func receiveFramesEndsTheStreamAndTheCall() async throws {
        let lifetime = CallLifetime(endAfterMedia: true, mediaTimeout: .seconds(10))
        let h = try await MemoryCallHarness(strategy: .push, media: (try Self.realtimeFile(),
                                                                     CallMediaConfiguration(receive: true,
                                                                                            receiveFrames: 20)),
                                            lifetime: lifetime)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let ended = await h.run(for: .seconds(30)) { h.b.call.hasHungUp }
        #expect(ended)
        #expect(h.b.call.ending == .completed, "\(String(describing: h.b.call.ending))")
        #expect(h.b.frames.count == 20 && h.b.call.media.stats.framesReceived == 20)
        let connected = try #require(h.b.call.milestones.iceConnected)
        let end = try #require(h.b.call.milestones.ended)
        // 20 frames of a 30 fps file: about two thirds of a second after connecting, not 2 s.
        #expect(end - connected < .seconds(1), "\(end - connected)")
    }

    /// A stream that has not ended by the media timeout fails the call, saying how far it got.
    @Test func mediaTimeoutFailsACallWhoseStreamDoesNotEnd() async throws {
        let lifetime = CallLifetime(endAfterMedia: true, mediaTimeout: .seconds(1))
        let h = try await MemoryCallHarness(strategy: .push, media: (try Self.realtimeFile(),
                                                                     CallMediaConfiguration(receive: true)),
                                            lifetime: lifetime)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let ended = await h.run(for: .seconds(30)) { h.b.call.hasHungUp }
        #expect(ended)
        guard case .failed(let why) = h.b.call.ending else {
            Issue.record("B ended \(String(describing: h.b.call.ending))")
            return
        }
        #expect(why.contains("the media did not end within 1.0 seconds of connecting"), "\(why)")
        #expect(why.contains("frames received"), "\(why)")
        let connected = try #require(h.b.call.milestones.iceConnected)
        let end = try #require(h.b.call.milestones.ended)
        #expect(end - connected >= .seconds(1) && end - connected < .milliseconds(1100))
    }
}

/// Calls that never end (issue #13, item 6): a connected call whose path fails — the remote was
/// killed, or every datagram is lost — restarts ICE in a new epoch a bounded number of times, then
/// ends with `remote unreachable` within consent expiry + `reconnectTimeout`.
@Suite struct PeerCallUnreachableTests {
    /// Consent checked every second, lost after 3 s (RFC 7675's 5 s / 30 s, scaled down).
    static let consent = ConsentConfiguration(interval: .seconds(1), jitter: 0.2, disconnectedAfter: .seconds(2),
                                              expiry: .seconds(3))
    static let lifetime = CallLifetime(reconnectAttempts: 1, reconnectTimeout: .seconds(2))
    /// Consent expiry + reconnect timeout, and one consent period of slack for the last response.
    static let bound: Duration = .seconds(3) + .seconds(2) + .milliseconds(1_300)

    private func connected() async throws -> MemoryCallHarness {
        let h = try await MemoryCallHarness(strategy: .push, lifetime: Self.lifetime, consent: Self.consent)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let up = await h.run(for: .seconds(30)) {
            h.a.call.selectedPair != nil && h.b.call.selectedPair != nil
                && h.a.call.signaling.negotiator.state == h.b.call.signaling.negotiator.state
        }
        #expect(up)
        return h
    }

    private func expectUnreachable(_ peer: MemoryPeer, since: Instant, _ h: MemoryCallHarness) async {
        let ended = await h.run(for: .seconds(60)) { peer.call.hasHungUp }
        #expect(ended, "still \(peer.call.signaling.negotiator.state), ICE \(peer.call.report.iceState)")
        guard case .failed(let why)? = peer.call.ending else {
            Issue.record("ended \(String(describing: peer.call.ending))")
            return
        }
        #expect(why.hasPrefix(PeerCall.remoteUnreachable), "\(why)")
        let end = peer.call.milestones.ended ?? h.now
        #expect(end - since <= Self.bound, "ended \(end - since) after the remote went away")
        #expect(end - since >= .seconds(3), "ended before consent could expire: \(end - since)")
    }

    @Test func theOfferCreatorRestartsOnceThenEndsWhenTheRemoteIsKilled() async throws {
        let h = try await connected()
        h.killed.insert(ObjectIdentifier(h.b))
        let killedAt = h.now
        await expectUnreachable(h.a, since: killedAt, h)
        // It tried a new epoch (an ICE restart through the store) before giving up.
        #expect(h.a.call.signaling.negotiator.counters.epochsStarted == 2)
        #expect(h.a.call.report.restartsTried == 1)
    }

    @Test func theAnswererEndsWhenTheOfferCreatorIsKilled() async throws {
        let h = try await connected()
        h.killed.insert(ObjectIdentifier(h.a))
        await expectUnreachable(h.b, since: h.now, h)
    }

    @Test func noRestartsAllowedEndsAtConsentExpiry() async throws {
        var lifetime = Self.lifetime
        lifetime.reconnectAttempts = 0
        let h = try await MemoryCallHarness(strategy: .push, lifetime: lifetime, consent: Self.consent)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        _ = await h.run(for: .seconds(30)) { h.a.call.selectedPair != nil && h.b.call.selectedPair != nil }
        h.killed.insert(ObjectIdentifier(h.b))
        let killedAt = h.now
        _ = await h.run(for: .seconds(30)) { h.a.call.hasHungUp }
        let end = try #require(h.a.call.milestones.ended)
        #expect(end - killedAt <= .seconds(3) + .milliseconds(1_300))
        #expect(h.a.call.signaling.negotiator.counters.epochsStarted == 1)
        if case .failed(let why)? = h.a.call.ending { #expect(why.hasPrefix(PeerCall.remoteUnreachable)) } else {
            Issue.record("ended \(String(describing: h.a.call.ending))")
        }
    }

    /// A path that comes back: the restart's new epoch connects and the call goes on.
    @Test func aPathThatComesBackReconnectsInANewEpoch() async throws {
        let h = try await connected()
        let first = h.a.call.signaling.negotiator.activeEpoch
        h.partitioned = true
        // Consent expires on both sides; A (the offer creator) starts a new epoch through the store.
        _ = await h.run(for: .seconds(10)) { h.a.call.signaling.negotiator.counters.epochsStarted == 2 }
        h.partitioned = false
        let back = await h.run(for: .seconds(10)) {
            guard case .connected(let a) = h.a.call.signaling.negotiator.state,
                  case .connected(let b) = h.b.call.signaling.negotiator.state else { return false }
            return a == b && a != first
        }
        let states = "A \(h.a.call.signaling.negotiator.state) ICE \(h.a.call.report.iceState), "
            + "B \(h.b.call.signaling.negotiator.state) ICE \(h.b.call.report.iceState)"
        #expect(back, "\(states)")
        _ = await h.run(for: .seconds(5)) { h.a.call.hasHungUp }
        #expect(!h.a.call.hasHungUp && !h.b.call.hasHungUp)
    }
}

/// A recorder whose sender's description carries no stream format (another implementation, or an
/// old peer) must not connect and drop every packet silently (issue #13, item 6).
@Suite struct PeerCallRecorderTests {
    @Test func aRecorderRefusesADescriptionWithoutTheFormat() async throws {
        // A sends nothing (so its description has no a=x-zonertc-format); B wants to record.
        let h = try await MemoryCallHarness(strategy: .push, media: (CallMediaConfiguration(),
                                                                     CallMediaConfiguration(receive: true)),
                                            lifetime: CallLifetime(connectTimeout: .seconds(20)))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let ended = await h.run(for: .seconds(10)) { h.b.call.hasHungUp }
        #expect(ended)
        guard case .failed(let why)? = h.b.call.ending else {
            Issue.record("B ended \(String(describing: h.b.call.ending))")
            return
        }
        #expect(why.contains("cannot record") && why.contains("x-zonertc-format"), "\(why)")
        // It ended when the description arrived, long before the connect timeout.
        let took = try #require(h.b.call.milestones.ended.flatMap { e in h.b.call.milestones.started.map { e - $0 } })
        #expect(took < .seconds(2))
    }

    @Test func mediaPacketsWithNothingToTakeThemAreCounted() async throws {
        // A streams to B, which does not record: every RTP packet B gets is dropped, and counted.
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
        let file = fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let (format, frames) = try VideoFileSource.read(path: file)
        let send = CallMediaConfiguration(send: .init(format: format, frames: Array(frames.prefix(5))), pace: .max)
        let h = try await MemoryCallHarness(strategy: .push, media: (send, CallMediaConfiguration()))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        _ = await h.run(for: .seconds(10)) { h.a.call.media.stats.packetsSent > 0 && h.wireIsEmpty }
        let sent = h.a.call.media.stats.packetsSent
        #expect(sent > 0)
        let dropped = h.b.call.media.stats.packetsDropped
        #expect(dropped >= sent, "sent \(sent), B dropped \(dropped)")
    }
}
