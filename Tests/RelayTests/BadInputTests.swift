import Foundation
import Net
import Relay
import STUN
import Testing
import TURN
import ZoneCore

/// Hostile and broken datagrams at the relay's port, on real loopback sockets: each is dropped or
/// answered with the error RFC 8656 assigns, the counters say so, and afterwards the relay still
/// relays for the client it served before and allocates for a new one.
@Suite("Bad input at the relay's port")
struct BadInputTests {
    /// Users u and v, 5 allocations per user, 8 in all.
    static func daemon() throws -> RelayDaemon {
        var config = TURNServerConfiguration(realm: "r", authentication: .users(["u": "p", "v": "q"]),
                                             relayAddress: .loopbackV4, nonceKey: [7, 7, 7])
        let ports = RelayProcess.portSlice()
        config.relayPorts = UInt16(ports.lowerBound)...UInt16(ports.upperBound)
        config.peerPolicy.allowLoopback = true
        config.maxAllocationsPerUser = 5
        config.maxAllocations = 8
        let d = try RelayDaemon(options: .init(listen: try Endpoint(parsing: "127.0.0.1:0"), server: config))
        d.start()
        return d
    }

    /// Reads whatever waits on `socket` until it stays quiet for `quietMilliseconds`.
    static func drain(_ socket: UDPSocket, quietMilliseconds: Int32 = 50) -> [[UInt8]] {
        var got: [[UInt8]] = []
        while let (bytes, _) = socket.receive(timeoutMilliseconds: quietMilliseconds) { got.append(bytes) }
        return got
    }

    @Test("random, truncated, oversized, badly signed and misnumbered datagrams; a quota flood")
    func hostileDatagrams() throws {
        // Blocking socket waits on this test's thread: the relay runs on its own loop thread, so
        // nothing here waits for the cooperative pool.
        let relayd = try Self.daemon()
        defer { relayd.stop() }
        let server = relayd.endpoint
        let peer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))

        // A client served before the attack: allocation, permission, channel 0x4001.
        let alice = try RawTURNClient(server: server, seed: 1)
        let aliceRelay = try alice.allocate().get()
        #expect(alice.permit(peer.localEndpoint))
        #expect(alice.bind(channel: 0x4001, to: peer.localEndpoint)?.messageClass == .successResponse)

        let attacker = try RawTURNClient(server: server, seed: 2)
        var rng = SeededRandom(seed: 0xBAD)
        func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }

        // 1. Random datagrams, from a stranger and from alice's own 5-tuple (so ChannelData and
        //    requests reach an existing allocation), with STUN-shaped ones among them.
        for i in 0..<3000 {
            var bytes = randomBytes(Int(rng.next() % 1400))
            if i % 3 == 0 && bytes.count >= 20 {
                // A STUN header with the magic cookie and a consistent length, random attributes.
                bytes[0] &= 0x01
                bytes[2] = UInt8((bytes.count - 20) >> 8)
                bytes[3] = UInt8((bytes.count - 20) & 0xFF)
                bytes[4] = 0x21; bytes[5] = 0x12; bytes[6] = 0xA4; bytes[7] = 0x42
            }
            (i % 2 == 0 ? attacker : alice).socket.send(bytes, to: server)
            if i % 200 == 0 { _ = Self.drain(attacker.socket, quietMilliseconds: 1) }
        }
        _ = Self.drain(attacker.socket)
        _ = Self.drain(alice.socket)
        _ = Self.drain(peer)

        // 2. Every truncation of a signed Allocate: never an allocation; a readable header gets 400.
        // Nonces are bound to the 5-tuple they were given to: the attacker is challenged for its own.
        let (probe, probeBytes) = attacker.encode(.allocate, [.requestedTransport(protocolNumber: 17)], sign: false)
        attacker.nonce = attacker.exchange(probeBytes, id: probe.transactionID)?.nonce
        let (_, allocate) = attacker.encode(.allocate, [.requestedTransport(protocolNumber: 17)])
        for n in 0..<allocate.count { attacker.socket.send(Array(allocate[0..<n]), to: server) }
        let truncatedAnswers = Self.drain(attacker.socket).compactMap { try? STUNMessage(decoding: $0) }
        #expect(!truncatedAnswers.isEmpty && truncatedAnswers.allSatisfy { $0.errorCode?.code == 400 },
                "\(truncatedAnswers.map { $0.errorCode?.code ?? 0 })")

        // 3. Oversized: longer than the relay reads (cut by the kernel), a 64 KB datagram, and a
        //    STUN length field far beyond the datagram.
        attacker.socket.send(allocate + randomBytes(4000), to: server)
        attacker.socket.send(randomBytes(65_000), to: server)
        var lying = allocate
        lying[2] = 0xFF; lying[3] = 0xF0
        attacker.socket.send(lying, to: server)
        for answer in Self.drain(attacker.socket).compactMap({ try? STUNMessage(decoding: $0) }) {
            #expect(answer.messageClass == .errorResponse && answer.errorCode?.code == 400)
        }

        // 4. Bad integrity: a wrong password, a flipped HMAC byte, a flipped FINGERPRINT byte.
        let mallory = try RawTURNClient(server: server, password: "not p", seed: 3)
        #expect((try? mallory.allocate().get()) == nil)
        // Without FINGERPRINT, so the flipped HMAC byte (the last byte) is all that is wrong.
        let unsigned = STUNMessage(method: .allocate, messageClass: .request, transactionID: .random(using: &rng),
                                   attributes: [.requestedTransport(protocolNumber: 17), .username("u"), .realm("r"),
                                                .nonce(attacker.nonce ?? "")])
        var flipped = try unsigned.encode(key: alice.key, fingerprint: false)
        flipped[flipped.count - 1] ^= 0x01
        let flippedAnswer = attacker.exchange(flipped, id: unsigned.transactionID)
        #expect(flippedAnswer?.errorCode?.code == 401)
        var badFingerprint = attacker.encode(.allocate, [.requestedTransport(protocolNumber: 17)])
        badFingerprint.1[badFingerprint.1.count - 1] ^= 0x01
        attacker.socket.send(badFingerprint.1, to: server)
        for answer in Self.drain(attacker.socket).compactMap({ try? STUNMessage(decoding: $0) }) {
            #expect(answer.xorRelayedAddress == nil)
        }
        #expect(relayd.counters.authFailures >= 2)

        // 5. Wrong channel numbers: outside 0x4000–0x7FFF, or taken by another peer.
        let otherPeer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        #expect(alice.bind(channel: 0x3FFF, to: peer.localEndpoint)?.errorCode?.code == 400)
        #expect(alice.bind(channel: 0x8000, to: peer.localEndpoint)?.errorCode?.code == 400)
        #expect(alice.bind(channel: 0x4001, to: otherPeer.localEndpoint)?.errorCode?.code == 400)
        #expect(alice.bind(channel: 0x4002, to: peer.localEndpoint)?.errorCode?.code == 400)  // peer has 0x4001
        _ = Self.drain(peer)
        let droppedBefore = relayd.counters.dropped
        // ChannelData on an unbound channel, on channels no client may use, and from a stranger.
        alice.socket.send(try ChannelData(channel: 0x4003, payload: [1, 2, 3]).encode(), to: server)
        alice.socket.send([0x80, 0x00, 0x00, 0x03, 1, 2, 3, 0], to: server)
        alice.socket.send([0x3F, 0xFF, 0x00, 0x03, 1, 2, 3, 0], to: server)
        attacker.socket.send(try ChannelData(channel: 0x4001, payload: [4, 5, 6]).encode(), to: server)
        // ChannelData whose length runs past the datagram.
        alice.socket.send([0x40, 0x01, 0x04, 0x00, 1, 2, 3, 4], to: server)
        #expect(Self.drain(peer, quietMilliseconds: 200).isEmpty)
        #expect(relayd.counters.dropped >= droppedBefore + 2)

        // 6. A flood of Allocates past the quotas: 5 per user, 8 in all → 486.
        var codes: [String: [Int]] = ["u": [], "v": []]
        var extra: [RawTURNClient] = []
        for (i, user) in (Array(repeating: "u", count: 8) + Array(repeating: "v", count: 6)).enumerated() {
            let c = try RawTURNClient(server: server, user: user, password: user == "u" ? "p" : "q",
                                      seed: 100 + UInt64(i))
            switch c.allocate() {
            case .success: codes[user]!.append(200); extra.append(c)
            case .failure(let f): codes[user]!.append(f.code)
            }
        }
        // alice holds one of u's five; u gets 4 more, then v fills the 8, then 486 for everyone.
        #expect(codes["u"] == [200, 200, 200, 200, 486, 486, 486, 486])
        #expect(codes["v"] == [200, 200, 200, 486, 486, 486])
        #expect(relayd.counters.activeAllocations == 8)

        // Afterwards: alice's channel still relays both ways ...
        _ = Self.drain(peer)
        _ = Self.drain(alice.socket)
        alice.socket.send(try ChannelData(channel: 0x4001, payload: Array("after".utf8)).encode(), to: server)
        let atPeer = try #require(peer.receive(timeoutMilliseconds: 2000))
        #expect(atPeer.bytes == Array("after".utf8) && atPeer.from == aliceRelay)
        peer.send(Array("back".utf8), to: aliceRelay)
        let back = try #require(alice.socket.receive(timeoutMilliseconds: 2000))
        #expect((try? ChannelData(decoding: back.bytes))?.payload == Array("back".utf8))
        // ... and once an allocation is released, a new client gets one and relays through it.
        #expect(extra[0].release())
        let late = try RawTURNClient(server: server, user: "v", password: "q", seed: 999)
        let lateRelay = try late.allocate().get()
        #expect(late.permit(peer.localEndpoint))
        let send = try STUNMessage(method: .send, messageClass: .indication, transactionID: .random(using: &rng),
                                   attributes: [.xorPeerAddress(peer.localEndpoint), .data([42])]).encode()
        late.socket.send(send, to: server)
        let lateAtPeer = try #require(peer.receive(timeoutMilliseconds: 2000))
        #expect(lateAtPeer.bytes == [42] && lateAtPeer.from == lateRelay)
        let c = relayd.counters
        #expect(c.malformed > 100 && c.dropped > 0 && c.activeAllocations == 8, "\(c)")
    }

    @Test("a relayed port another program holds: the allocation moves to a free one")
    func relayedPortTaken() throws {
        // Five ports, four of them held: whichever the relay tries first, it ends on the free one.
        let first = UInt16(RelayProcess.portSlice().lowerBound)
        let free = first + 2
        let squatters = try [first, first + 1, first + 3, first + 4].map {
            try UDPSocket(bind: Endpoint(address: .loopbackV4, port: $0))
        }
        var config = TURNServerConfiguration(realm: "r", authentication: .users(["u": "p"]),
                                             relayAddress: .loopbackV4, nonceKey: [1])
        config.relayPorts = first...(first + 4)
        let relayd = try RelayDaemon(options: .init(listen: try Endpoint(parsing: "127.0.0.1:0"), server: config))
        relayd.start()
        defer { relayd.stop() }
        let client = try RawTURNClient(server: relayd.endpoint)
        #expect(try client.allocate().get() == Endpoint(address: .loopbackV4, port: free))
        #expect(squatters.count == 4)
        #expect(relayd.counters.activeAllocations == 1)
    }
}
