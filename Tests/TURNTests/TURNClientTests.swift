import STUN
import Testing
@testable import TURN
import ZoneCore

/// Our TURN client against our TURN server engine, in memory on a manual clock (RFC 8656).
@Suite("TURN client")
struct TURNClientTests {
    let peer = try! Endpoint(parsing: "127.0.0.1:5000")

    /// A loop with one client, allocated.
    func allocated(configure: (inout TURNClientConfiguration) -> Void = { _ in }) -> TURNLoop {
        let loop = TURNLoop()
        loop.addClient(configure: configure)
        loop.run(for: .seconds(5)) { $0.clients[0].phase == .allocated }
        return loop
    }

    @Test("Allocate: unsigned first, 401 with realm and nonce, signed retry, relayed and mapped addresses")
    func allocateDance() throws {
        let loop = TURNLoop()
        loop.addClient()
        #expect(loop.run(for: .seconds(5)) { $0.clients[0].phase == .allocated })
        let requests = loop.requests(0)
        #expect(requests.map(\.method) == [.allocate, .allocate])
        #expect(requests.map(\.signed) == [false, true])
        let relayed = try #require(loop.relayed(0))
        #expect(loop.events[0] == [.allocated(relayed: relayed, mapped: loop.clientAddresses[0])])
        #expect((50000...50099).contains(relayed.port) && relayed.address == .loopbackV4)
        #expect(loop.server.activeAllocations == 1)
        // REQUESTED-TRANSPORT UDP and LIFETIME went in the request.
        let first = try STUNMessage(decoding: loop.sent[0].bytes)
        #expect(first.requestedTransport == 17 && first.lifetime == 600)
        #expect(loop.clients[0].expiresAt == loop.now + .seconds(600))
    }

    @Test("a wrong password fails with 401 after one signed try, and the client stops")
    func wrongPassword() {
        let loop = TURNLoop()
        loop.addClient(password: "wrong")
        loop.run(for: .seconds(60))
        #expect(loop.requests(0).map(\.signed) == [false, true])
        guard case .allocationFailed(let code, _)? = loop.events[0].last else {
            Issue.record("no failure event: \(loop.events[0])")
            return
        }
        #expect(code == 401)
        #expect(loop.clients[0].phase == .closed && loop.clients[0].nextDeadline == nil)
        #expect(throws: TURNClientError.self) { try loop.clients[0].send([1], to: peer, now: loop.now) }
    }

    @Test("an unknown user fails the same way; no server at all fails with code 0 after 39.5 s of retransmissions")
    func failures() {
        let loop = TURNLoop()
        loop.addClient(username: "mallory", password: "x")
        loop.addClient()
        loop.dropToServer = { i, _ in i == 1 }
        loop.run(for: .seconds(120))
        #expect(loop.events[0].contains { if case .allocationFailed(401, _) = $0 { true } else { false } })
        // RFC 8489 §6.2.1: sends at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5 s; failure at 39.5 s.
        #expect(loop.requests(1).count == 7)
        #expect(loop.clients[1].counters.retransmissions == 6)
        #expect(loop.events[1] == [.allocationFailed(code: 0, reason: "no response from 127.0.0.1:3478 to Allocate")])
    }

    @Test("the timeout comes exactly Rm × RTO after the last of Rc sends")
    func timeoutInstant() {
        let loop = TURNLoop()
        loop.addClient()
        loop.dropToServer = { _, _ in true }
        let start = loop.now
        var failedAt: Instant?
        loop.run(for: .seconds(120)) { l in
            if failedAt == nil, !l.events[0].isEmpty { failedAt = l.now }
            return failedAt != nil
        }
        #expect(failedAt.map { $0 - start } == .milliseconds(39_500))
    }

    @Test("lost datagrams: retransmissions carry the Allocate through")
    func retransmission() {
        let loop = TURNLoop()
        var dropped = 0
        loop.dropToServer = { _, _ in dropped += 1; return dropped <= 2 }
        loop.addClient()
        #expect(loop.run(for: .seconds(30)) { $0.clients[0].phase == .allocated })
        #expect(loop.clients[0].counters.retransmissions >= 2)
    }

    @Test("send: CreatePermission, queued payloads as Send indications, ChannelBind, then ChannelData")
    func permissionThenChannel() throws {
        let loop = allocated()
        let relayed = try #require(loop.relayed(0))
        try loop.clients[0].send([1, 2, 3], to: peer, now: loop.now)
        try loop.clients[0].send([4, 5], to: peer, now: loop.now)
        #expect(!loop.clients[0].hasPermission(for: peer))
        loop.run(for: .seconds(1)) { $0.clients[0].channel(for: self.peer) != nil }
        #expect(loop.events[0].contains(.permissionCreated(peer.address)))
        #expect(loop.events[0].contains(.channelBound(channel: 0x4000, peer: peer)))
        #expect(loop.peerInbox.map(\.bytes) == [[1, 2, 3], [4, 5]])
        #expect(loop.peerInbox.allSatisfy { $0.from == relayed && $0.to == peer })
        #expect(loop.clients[0].counters.sendIndications == 2)
        #expect(loop.requests(0).map(\.method).suffix(2) == [.createPermission, .channelBind])

        try loop.clients[0].send([6], to: peer, now: loop.now)
        loop.run(for: .milliseconds(100))
        #expect(loop.peerInbox.last?.bytes == [6])
        #expect(loop.clients[0].counters.channelDataSent == 1)
        // The ChannelData on the wire: channel 0x4000, length 1, padded.
        #expect(loop.sent.last?.bytes == [0x40, 0x00, 0x00, 0x01, 6, 0, 0, 0])
    }

    @Test("data from the peer: Data indication before the channel, ChannelData after, both unwrapped")
    func dataFromPeer() throws {
        let loop = allocated()
        let relayed = try #require(loop.relayed(0))
        // Without a permission the server drops the peer's datagram.
        loop.peerSends([9], from: peer, to: relayed)
        loop.run(for: .milliseconds(100))
        #expect(loop.received(0).isEmpty)

        loop.clients[0].createPermission(for: peer, now: loop.now)
        loop.run(for: .seconds(1)) { $0.clients[0].hasPermission(for: self.peer) }
        loop.peerSends([10, 11], from: peer, to: relayed)
        loop.run(for: .milliseconds(100))
        #expect(loop.received(0).map(\.bytes) == [[10, 11]])
        #expect(loop.received(0).first?.from == peer)

        loop.clients[0].bindChannel(to: peer, now: loop.now)
        loop.run(for: .seconds(1)) { $0.clients[0].channel(for: self.peer) != nil }
        var fromServer: [UInt8] = []
        loop.dropToClient = { bytes in fromServer = bytes; return false }
        loop.peerSends([12, 13, 14], from: peer, to: relayed)
        loop.run(for: .milliseconds(100))
        #expect(fromServer.first == 0x40)  // it came as ChannelData
        #expect(loop.received(0).map(\.bytes) == [[10, 11], [12, 13, 14]])
    }

    @Test("two clients reach each other's relayed addresses through one server, both ways")
    func clientToClient() throws {
        let loop = TURNLoop()
        loop.addClient()
        loop.addClient(username: "bob", password: "hunter2")
        loop.run(for: .seconds(5)) { $0.clients.allSatisfy { $0.phase == .allocated } }
        let (a, b) = (try #require(loop.relayed(0)), try #require(loop.relayed(1)))
        // Each side must permit the other before data passes (RFC 8656 §9).
        loop.clients[1].createPermission(for: a, now: loop.now)
        loop.run(for: .seconds(1)) { $0.clients[1].hasPermission(for: a) }
        for n in 0..<5 { try loop.clients[0].send([UInt8(n)], to: b, now: loop.now) }
        loop.run(for: .seconds(1))
        #expect(loop.received(1).map(\.bytes) == (0..<5).map { [UInt8($0)] })
        #expect(loop.received(1).allSatisfy { $0.from == a })
        try loop.clients[1].send([42], to: a, now: loop.now)
        loop.run(for: .seconds(1))
        #expect(loop.received(0).map(\.bytes) == [[42]])
        #expect(loop.received(0).first?.from == b)
    }

    @Test("refresh: allocation, permission and channel live on for an hour of virtual time")
    func refreshes() throws {
        let loop = allocated()
        let relayed = try #require(loop.relayed(0))
        try loop.clients[0].send([1], to: peer, now: loop.now)
        loop.run(for: .seconds(1)) { $0.clients[0].channel(for: self.peer) != nil }
        loop.run(for: .seconds(3600))
        let refreshes = loop.events[0].filter { if case .refreshed = $0 { true } else { false } }
        #expect(refreshes.count >= 6)
        #expect(refreshes.first == .refreshed(lifetime: .seconds(600)))
        #expect(loop.server.activeAllocations == 1 && loop.clients[0].phase == .allocated)
        #expect(loop.requests(0).filter { $0.method == .createPermission }.count >= 14)
        #expect(loop.requests(0).filter { $0.method == .channelBind }.count >= 6)
        #expect(!loop.events[0].contains { if case .requestFailed = $0 { true } else { false } })
        // The channel still carries data both ways.
        loop.peerSends([77], from: peer, to: relayed)
        try loop.clients[0].send([78], to: peer, now: loop.now)
        loop.run(for: .milliseconds(100))
        #expect(loop.received(0).last?.bytes == [77])
        #expect(loop.peerInbox.last?.bytes == [78])
        #expect(loop.sent.last?.bytes.first == 0x40)
    }

    @Test("438 Stale Nonce: the request goes again with the new nonce and succeeds")
    func staleNonce() throws {
        var configuration = TURNLoop.serverConfiguration()
        configuration.nonceLifetime = .seconds(30)
        let loop = TURNLoop(server: configuration)
        loop.addClient()
        loop.run(for: .seconds(5)) { $0.clients[0].phase == .allocated }
        var staleAnswers = 0
        loop.dropToClient = { bytes in
            if let m = try? STUNMessage(decoding: bytes), m.errorCode?.code == 438 { staleAnswers += 1 }
            return false
        }
        loop.run(for: .seconds(60))
        loop.clients[0].createPermission(for: peer, now: loop.now)
        #expect(loop.run(for: .seconds(5)) { $0.clients[0].hasPermission(for: self.peer) })
        #expect(staleAnswers == 1)
        let permissionRequests = loop.sent.filter {
            (try? STUNMessage(decoding: $0.bytes))?.method == .createPermission
        }
        let nonces = permissionRequests.compactMap { try? STUNMessage(decoding: $0.bytes).nonce }
        #expect(nonces.count == 2 && nonces[0] != nonces[1])
        #expect(!loop.events[0].contains { if case .requestFailed = $0 { true } else { false } })
    }

    @Test("deallocate: Refresh with lifetime 0, .deallocated, the server forgets the allocation")
    func deallocate() throws {
        let loop = allocated()
        try loop.clients[0].send([1], to: peer, now: loop.now)
        loop.run(for: .seconds(1))
        loop.clients[0].deallocate(now: loop.now)
        loop.run(for: .seconds(5)) { $0.clients[0].phase == .closed }
        #expect(loop.events[0].last == .deallocated)
        #expect(loop.server.activeAllocations == 0)
        let last = try STUNMessage(decoding: try #require(loop.sent.last?.bytes))
        #expect(last.method == .refresh && last.lifetime == 0)
        #expect(loop.clients[0].nextDeadline == nil)
        loop.run(for: .seconds(3600))
        #expect(loop.requests(0).last?.method == .refresh)  // nothing after
    }

    @Test("a server that forgot the allocation answers Refresh with 437: the allocation is lost")
    func allocationMismatch() {
        let loop = allocated()
        loop.server = TURNServer(configuration: TURNLoop.serverConfiguration(), seed: 12)
        loop.run(for: .seconds(700))
        #expect(loop.events[0].contains { if case .allocationLost(437, _) = $0 { true } else { false } })
        #expect(loop.clients[0].phase == .closed)
    }

    @Test("an Allocate on a 5-tuple still allocated gets 437 and is sent again once the old allocation is gone")
    func allocateRetriedAfterMismatch() throws {
        let loop = allocated()
        let socket = loop.clientAddresses[0]
        // The old allocation's first deallocation is lost; a new client on the same socket allocates.
        var lost = false
        loop.dropToServer = { i, bytes in
            guard i == 0, !lost, (try? STUNMessage(decoding: bytes))?.lifetime == 0 else { return false }
            lost = true
            return true
        }
        loop.clients[0].deallocate(now: loop.now)
        loop.addClient(address: socket)
        #expect(loop.run(for: .seconds(10)) { $0.clients[1].phase == .allocated })
        #expect(lost)
        #expect(loop.events[1].contains { e in
            if case .requestFailed(.allocate, nil, 437, _) = e { true } else { false }
        })
        #expect(loop.events[0].last == .deallocated)
        #expect(loop.server.activeAllocations == 1)
    }

    @Test("an Allocate refused with 437 every time fails after its retries, 7.5 s of backoff")
    func allocateMismatchGivesUp() throws {
        let loop = allocated()
        let start = loop.now
        loop.addClient(address: loop.clientAddresses[0])
        loop.run(for: .seconds(30)) { $0.clients[1].phase == .closed }
        #expect(loop.events[1].last.map { if case .allocationFailed(437, _) = $0 { true } else { false } } == true)
        #expect(loop.events[1].filter { if case .requestFailed(.allocate, _, 437, _) = $0 { true } else { false } }
            .count == 4)
        #expect(loop.now - start >= .milliseconds(7_500) && loop.now - start < .seconds(9))
        #expect(loop.clients[1].nextDeadline == nil)
    }

    @Test("awaitsResponse: only answers to the client's own requests in flight")
    func awaitsResponse() throws {
        let loop = allocated()
        loop.clients[0].deallocate(now: loop.now)
        loop.drain()
        let refresh = try STUNMessage(decoding: try #require(loop.sent.last?.bytes))
        let answer = try refresh.successResponse(attributes: [.lifetime(seconds: 0)]).encode()
        #expect(loop.clients[0].awaitsResponse(answer))
        let stray = try STUNMessage(method: .refresh, messageClass: .successResponse,
                                    transactionID: STUNTransactionID(high: 1, low: 2)).encode()
        #expect(!loop.clients[0].awaitsResponse(stray))
        #expect(!loop.clients[0].awaitsResponse(try refresh.encode()))  // a request, not an answer
        #expect(!loop.clients[0].awaitsResponse(Array(answer.prefix(12))))
    }

    @Test("a refused peer: CreatePermission 403 is reported and the queued payload dropped")
    func forbiddenPeer() throws {
        var configuration = TURNLoop.serverConfiguration()
        configuration.peerPolicy.allowLoopback = false
        let loop = TURNLoop(server: configuration)
        loop.addClient()
        loop.run(for: .seconds(5)) { $0.clients[0].phase == .allocated }
        try loop.clients[0].send([1], to: peer, now: loop.now)
        loop.run(for: .seconds(1))
        #expect(loop.events[0].contains { e in
            if case .requestFailed(.createPermission, peer, 403, _) = e { true } else { false }
        })
        #expect(loop.peerInbox.isEmpty && loop.clients[0].counters.droppedPayloads == 1)
        // Sends in the retry delay are dropped without new requests.
        try loop.clients[0].send([2], to: peer, now: loop.now)
        #expect(loop.clients[0].counters.droppedPayloads == 2)
    }

    @Test("the permission queue is bounded: the oldest payloads are dropped")
    func boundedQueue() throws {
        let loop = allocated { $0.maxQueuedPayloads = 4 }
        for n in 0..<10 { try loop.clients[0].send([UInt8(n)], to: peer, now: loop.now) }
        loop.run(for: .seconds(1))
        #expect(loop.peerInbox.map(\.bytes) == [[6], [7], [8], [9]])
        #expect(loop.clients[0].counters.droppedPayloads == 6)
    }

    @Test("malformed and forged server datagrams are counted and dropped; the client carries on")
    func hostileServer() throws {
        let loop = TURNLoop()
        loop.addClient()
        // Capture the real 401 and success so we can mutate them.
        var genuine: [[UInt8]] = []
        loop.dropToClient = { bytes in genuine.append(bytes); return false }
        loop.run(for: .seconds(5)) { $0.clients[0].phase == .allocated }
        loop.dropToClient = { _ in false }
        var client = loop.clients[0]
        let server = loop.serverAddress
        let now = loop.now
        var rng = SeededRandom(seed: 5)
        var inputs: [[UInt8]] = [[], [0], [0x40], [0x40, 0x00, 0x00, 0x09, 1], [0x01, 0x01, 0x00, 0x04], [0xFF, 1, 2]]
        // A forged Allocate success (no integrity) for an unknown transaction, a Data indication
        // without DATA, ChannelData for a channel we never bound.
        let stray = STUNMessage(method: .allocate, messageClass: .successResponse, transactionID: .random(using: &rng),
                                attributes: [.xorRelayedAddress(try Endpoint(parsing: "6.6.6.6:6"))])
        inputs.append(try stray.encode(fingerprint: true))
        let noData = STUNMessage(method: .data, messageClass: .indication, transactionID: .random(using: &rng),
                                 attributes: [.xorPeerAddress(peer)])
        inputs.append(try noData.encode())
        inputs.append(try ChannelData(channel: 0x4ABC, payload: [1, 2]).encode())
        for _ in 0..<20_000 {
            var bytes = genuine[Int(rng.next() % UInt64(genuine.count))]
            for _ in 0..<(1 + rng.next() % 4) where !bytes.isEmpty {
                let i = Int(rng.next() % UInt64(bytes.count))
                bytes[i] = UInt8(truncatingIfNeeded: rng.next())
            }
            if rng.chance(0.2) { bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1)))) }
            inputs.append(bytes)
        }
        for bytes in inputs { client.handle(.datagram(bytes, from: server), now: now) }
        var events: [TURNClient.Event] = []
        while let output = client.pollOutput() { if case .event(let e) = output { events.append(e) } }
        #expect(events.allSatisfy { if case .data = $0 { true } else { false } })
        #expect(client.phase == .allocated && client.relayedAddress == loop.relayed(0))
        #expect(client.counters.malformed + client.counters.ignored > 1000)

        // A success response whose integrity fails is ignored; the real one is then accepted.
        loop.clients[0] = client
        loop.clients[0].createPermission(for: peer, now: loop.now)
        var forged = false
        loop.dropToClient = { bytes in
            guard !forged, var m = try? STUNMessage(decoding: bytes), m.method == .createPermission else {
                return false
            }
            forged = true
            m.attributes.removeAll { $0.type == .messageIntegrity || $0.type == .fingerprint }
            let key = STUNIntegrityKey(bytes: Array(repeating: 1, count: 16))
            loop.clients[0].handle(.datagram(try! m.encode(key: key, fingerprint: true), from: server), now: loop.now)
            return false
        }
        #expect(loop.run(for: .seconds(5)) { $0.clients[0].hasPermission(for: self.peer) })
        #expect(forged)
    }

    @Test("datagrams from anyone but the server are ignored")
    func otherSources() throws {
        let loop = allocated()
        let relayed = try #require(loop.relayed(0))
        let indication = STUNMessage(method: .data, messageClass: .indication,
                                     transactionID: STUNTransactionID(high: 1, low: 2),
                                     attributes: [.xorPeerAddress(peer), .data([1])])
        loop.clients[0].handle(.datagram(try indication.encode(), from: peer), now: loop.now)
        #expect(loop.clients[0].pollOutput() == nil)
        #expect(loop.clients[0].counters.ignored == 1)
        #expect(loop.clients[0].relayedAddress == relayed)
    }
}
