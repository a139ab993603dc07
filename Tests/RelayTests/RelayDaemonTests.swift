import Foundation
import Net
import Relay
import STUN
import Testing
import TURN
import ZoneCore

/// The relay daemon on real loopback sockets, driven by a raw STUN client and a UDP peer.
@Suite("Relay daemon on loopback")
struct RelayDaemonTests {
    func daemon(batchWait: Duration = RelayDaemon.Options.defaultBatchWait) throws -> RelayDaemon {
        var config = TURNServerConfiguration(realm: "r", authentication: .users(["u": "p"]),
                                             relayAddress: .loopbackV4, nonceKey: [4, 2])
        config.relayPorts = 52000...52999
        config.peerPolicy.allowLoopback = true
        var options = RelayDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"), server: config)
        options.batchWait = batchWait
        let d = try RelayDaemon(options: options)
        d.start()
        return d
    }

    /// Sends a request and waits for the response with the same transaction ID.
    func exchange(_ socket: UDPSocket, _ server: Endpoint, _ message: STUNMessage, key: STUNIntegrityKey?) -> STUNMessage? {
        guard let bytes = try? message.encode(key: key, fingerprint: true), socket.send(bytes, to: server) else { return nil }
        for _ in 0..<10 {
            guard let (reply, _) = socket.receive(timeoutMilliseconds: 2000) else { return nil }
            if let m = try? STUNMessage(decoding: reply), m.transactionID == message.transactionID { return m }
        }
        return nil
    }

    /// A client's requests as user u: with a nonce they carry the long-term credentials and integrity.
    final class Requester {
        let client: UDPSocket
        let server: Endpoint
        let exchange: (UDPSocket, Endpoint, STUNMessage, STUNIntegrityKey?) -> STUNMessage?
        var rng: SeededRandom

        init(_ tests: RelayDaemonTests, _ client: UDPSocket, _ server: Endpoint, seed: UInt64) {
            self.client = client
            self.server = server
            exchange = tests.exchange
            rng = SeededRandom(seed: seed)
        }

        func callAsFunction(_ method: STUNMethod, _ attrs: [STUNAttribute], nonce: String?) -> STUNMessage? {
            var all = attrs
            var key: STUNIntegrityKey?
            if let nonce {
                all += [.username("u"), .realm("r"), .nonce(nonce)]
                key = try! STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p")
            }
            return exchange(client, server, STUNMessage(method: method, messageClass: .request,
                                                        transactionID: .random(using: &rng), attributes: all), key)
        }
    }

    @Test("allocate, permit, relay both ways through real sockets; refresh 0 releases")
    func roundTrip() throws {
        let relayd = try daemon()
        defer { relayd.stop() }
        let client = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let peer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let server = relayd.endpoint
        let request = Requester(self, client, server, seed: 1)
        let binding = request(.binding, [], nonce: nil)
        #expect(binding?.xorMappedAddress == client.localEndpoint)
        let challenge = try #require(request(.allocate, [.requestedTransport(protocolNumber: 17)], nonce: nil))
        #expect(challenge.errorCode?.code == 401)
        let nonce = challenge.nonce
        let allocated = try #require(request(.allocate, [.requestedTransport(protocolNumber: 17)], nonce: nonce))
        let relay = try #require(allocated.xorRelayedAddress)
        #expect(request(.createPermission, [.xorPeerAddress(peer.localEndpoint)], nonce: nonce)?.messageClass == .successResponse)

        let send = try STUNMessage(method: .send, messageClass: .indication,
                                   transactionID: .random(using: &request.rng),
                                   attributes: [.xorPeerAddress(peer.localEndpoint), .data(Array("ping".utf8))]).encode()
        #expect(client.send(send, to: server))
        let atPeer = try #require(peer.receive(timeoutMilliseconds: 2000))
        #expect(atPeer.bytes == Array("ping".utf8) && atPeer.from == relay)
        #expect(peer.send(Array("pong".utf8), to: relay))
        let data = try #require(client.receive(timeoutMilliseconds: 2000))
        let indication = try STUNMessage(decoding: data.bytes)
        #expect(indication.method == .data && indication.data == Array("pong".utf8))

        #expect(request(.channelBind, [.channelNumber(0x4000), .xorPeerAddress(peer.localEndpoint)], nonce: nonce)?
                    .messageClass == .successResponse)
        #expect(client.send(try ChannelData(channel: 0x4000, payload: [1, 2, 3]).encode(), to: server))
        #expect(peer.receive(timeoutMilliseconds: 2000)?.bytes == [1, 2, 3])
        #expect(peer.send([4, 5], to: relay))
        let frame = try #require(client.receive(timeoutMilliseconds: 2000))
        #expect((try? ChannelData(decoding: frame.bytes))?.payload == [4, 5])

        #expect(request(.refresh, [.lifetime(seconds: 0)], nonce: nonce)?.lifetime == 0)
        #expect(relayd.counters.activeAllocations == 0)
        // The batching counters, published before the Refresh answer left: ten datagrams read (eight
        // requests and indications, the peer's two), two sent on the fast path (the ChannelData each
        // way; STUN and Send/Data indications go through the engine's actions), one message each.
        let batches = relayd.batchCounters
        #expect(batches.datagramsReceived == 10 && batches.receiveCalls >= 10, "\(batches)")
        #expect(batches.datagramsSent == 2 && batches.messagesSent == 2 && batches.sendCalls == 2, "\(batches)")
        // The relayed port is closed: a peer's datagram now goes nowhere.
        #expect(peer.send([9], to: relay))
        #expect(client.receive(timeoutMilliseconds: 200) == nil)
    }

    @Test("a burst of ChannelData is relayed whole and in order, resting between reads only when that is on",
          arguments: [Duration.microseconds(100), .zero])
    func burst(batchWait: Duration) throws {
        let relayd = try daemon(batchWait: batchWait)
        defer { relayd.stop() }
        let client = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let peer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"), batch: 64)
        let server = relayd.endpoint
        let request = Requester(self, client, server, seed: 2)
        let nonce = try #require(request(.allocate, [.requestedTransport(protocolNumber: 17)], nonce: nil)).nonce
        #expect(request(.allocate, [.requestedTransport(protocolNumber: 17)], nonce: nonce)?.xorRelayedAddress != nil)
        #expect(request(.channelBind, [.channelNumber(0x4000), .xorPeerAddress(peer.localEndpoint)], nonce: nonce)?
                    .messageClass == .successResponse)
        // 400 datagrams in bursts of 100: the relay's reads find several waiting.
        let frames = try (0..<400).map { i in
            let payload = [UInt8(i >> 8), UInt8(i & 0xFF)] + [UInt8](repeating: 7, count: 98)
            return try ChannelData(channel: 0x4000, payload: payload).encode(padded: true)
        }
        for burst in stride(from: 0, to: 400, by: 100) {
            #expect(client.send(frames[burst..<burst + 100].map { ($0, server) }) == 100)
        }
        var arrived: [Int] = []
        for _ in 0..<1000 where arrived.count < 400 {
            guard peer.waitReadable(milliseconds: 2000) else { break }
            _ = peer.receiveAll { bytes, _ in arrived.append(Int(bytes[0]) << 8 | Int(bytes[1])) }
        }
        #expect(arrived == Array(0..<400))
        let batches = relayd.batchCounters
        if batchWait > .zero {
            // A rest follows a read that found two or more datagrams waiting. Whether one did is the
            // scheduler's choice (a relay thread that keeps up reads them one by one, seen in CI), so
            // the rest is asserted only when a read batched; BatchWaitTests hold the policy itself.
            let someReadBatched = batches.datagramsReceived > batches.receiveCalls
            #expect(!someReadBatched || batches.pauses >= 1, "\(batches)")
        } else {
            #expect(batches.pauses == 0, "\(batches)")
        }
    }

    @Test("a captured Allocate and CreatePermission replayed byte for byte from another port get 438 and nothing")
    func replayFromAnotherPort() throws {
        let relayd = try daemon()
        defer { relayd.stop() }
        let server = relayd.endpoint
        let alice = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        let peer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        var rng = SeededRandom(seed: 7)
        let key = try STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p")
        func message(_ method: STUNMethod, _ attrs: [STUNAttribute]) -> STUNMessage {
            STUNMessage(method: method, messageClass: .request, transactionID: .random(using: &rng), attributes: attrs)
        }
        // What an eavesdropper captures: alice's authenticated requests, as bytes on the wire.
        let ask = message(.allocate, [.requestedTransport(protocolNumber: 17)])
        let challenge = try #require(exchange(alice, server, ask, key: nil))
        let nonce = try #require(challenge.nonce)
        let credentials: [STUNAttribute] = [.username("u"), .realm("r"), .nonce(nonce)]
        let allocate = try message(.allocate, [.requestedTransport(protocolNumber: 17)] + credentials)
            .encode(key: key, fingerprint: true)
        let permission = try message(.createPermission, [.xorPeerAddress(peer.localEndpoint)] + credentials)
            .encode(key: key, fingerprint: true)
        for captured in [allocate, permission] {
            #expect(alice.send(captured, to: server))
            let answer = try #require(alice.receive(timeoutMilliseconds: 2000))
            #expect(try STUNMessage(decoding: answer.bytes).messageClass == .successResponse)
        }
        #expect(relayd.counters.activeAllocations == 1)
        // The same bytes from three other source ports: 438 with a fresh nonce, no allocation, no quota used.
        for _ in 0..<3 {
            let attacker = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
            for captured in [allocate, permission] {
                #expect(attacker.send(captured, to: server))
                let reply = try #require(attacker.receive(timeoutMilliseconds: 2000))
                let answer = try STUNMessage(decoding: reply.bytes)
                #expect(answer.errorCode?.code == 438)
                #expect(answer.nonce != nil && answer.nonce != nonce)
                #expect(answer.xorRelayedAddress == nil)
            }
        }
        #expect(relayd.counters.activeAllocations == 1)
    }

    @Test("random bytes at the port: no crash, the relay keeps answering")
    func garbage() throws {
        let relayd = try daemon()
        defer { relayd.stop() }
        let client = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        var rng = SeededRandom(seed: 3)
        for _ in 0..<2000 {
            let bytes = (0..<(1 + Int(rng.next() % 300))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            client.send(bytes, to: relayd.endpoint)
        }
        let ping = STUNMessage(method: .binding, messageClass: .request, transactionID: .random(using: &rng), attributes: [])
        let reply = exchange(client, relayd.endpoint, ping, key: nil)
        #expect(reply?.xorMappedAddress == client.localEndpoint)
        #expect(relayd.counters.malformed > 0)
    }
}
