import Foundation
import STUN
import Testing
@testable import TURN
import ZoneCore

/// The TURN server engine driven by hand on a manual timeline (RFC 8656 over UDP).
@Suite("TURN server engine")
struct TURNServerTests {
    let server = try! Endpoint(parsing: "127.0.0.1:3478")
    let client = try! Endpoint(parsing: "127.0.0.1:40000")
    let peer = try! Endpoint(parsing: "127.0.0.1:5000")
    let t0 = Instant.seconds(1_800_000_000)

    func configuration(_ auth: TURNServerConfiguration.Authentication = .users(["u": "p"])) -> TURNServerConfiguration {
        var c = TURNServerConfiguration(realm: "r", authentication: auth, relayAddress: .loopbackV4, nonceKey: [1, 2, 3])
        c.relayPorts = 50000...50009
        c.peerPolicy.allowLoopback = true
        return c
    }

    /// A client-side view: builds requests with the long-term credentials once challenged.
    struct Client {
        var user = "u", password = "p"
        var nonce: String?
        var rng = SeededRandom(seed: 9)

        mutating func request(_ method: STUNMethod, _ attributes: [STUNAttribute], sign: Bool = true,
                              id: STUNTransactionID? = nil) -> [UInt8] {
            var attrs = attributes
            var key: STUNIntegrityKey?
            if sign, let nonce {
                attrs += [.username(user), .realm("r"), .nonce(nonce)]
                key = try! STUNIntegrityKey.longTerm(username: user, realm: "r", password: password)
            }
            let m = STUNMessage(method: method, messageClass: .request, transactionID: id ?? .random(using: &rng),
                                attributes: attrs)
            return try! m.encode(key: key, fingerprint: true)
        }
    }

    /// The STUN message sent to the client by the first action that sends one.
    func reply(_ actions: [TURNServer.Action]) -> STUNMessage? {
        for a in actions {
            switch a {
            case .toClient(let b, _, _), .openRelay(_, let b, _, _): return try? STUNMessage(decoding: b)
            default: continue
            }
        }
        return nil
    }

    /// Challenge, then allocate; returns the relayed address.
    func allocate(_ turn: inout TURNServer, _ c: inout Client, from: Endpoint? = nil,
                  extra: [STUNAttribute] = [], now: Instant) -> (Endpoint?, STUNMessage?) {
        let source = from ?? client
        let challenge = reply(turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)], sign: false),
                                                  from: source, to: server), now: now))
        c.nonce = challenge?.nonce
        let r = reply(turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)] + extra),
                                          from: source, to: server), now: now))
        return (r?.xorRelayedAddress, r)
    }

    @Test("Binding answers with the client's address, no credentials needed")
    func binding() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let r = reply(turn.outputs(after: .clientDatagram(c.request(.binding, [], sign: false),
                from: client, to: server), now: t0))
        #expect(r?.messageClass == .successResponse && r?.xorMappedAddress == client)
    }

    @Test("Allocate: 401 with realm and nonce, then success with relay, lifetime and mapped address")
    func allocateFlow() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let challenge = reply(turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)], sign: false),
                                                  from: client, to: server), now: t0))
        #expect(challenge?.errorCode?.code == 401 && challenge?.realm == "r" && challenge?.nonce != nil)
        c.nonce = challenge?.nonce
        let id = STUNTransactionID.random(using: &c.rng)
        let actions = turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)], id: id),
                                          from: client, to: server), now: t0)
        guard case .openRelay(let relay, let bytes, _, _)? = actions.first else { Issue.record("no relay"); return }
        #expect((50000...50009).contains(relay.port))
        let ok = try? STUNMessage(decoding: bytes)
        #expect(ok?.xorRelayedAddress == relay && ok?.lifetime == 600 && ok?.xorMappedAddress == client)
        #expect((try? STUNIntegrity.verify(bytes, key: STUNIntegrityKey.longTerm(username: "u", realm: "r", password: "p"))) != nil)
        // A retransmission gets the same relay; another Allocate on the same 5-tuple gets 437.
        let again = reply(turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)], id: id),
                                              from: client, to: server), now: t0))
        #expect(again?.xorRelayedAddress == relay)
        #expect(turn.activeAllocations == 1)
        let other = reply(turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)]),
                                              from: client, to: server), now: t0))
        #expect(other?.errorCode?.code == 437)
    }

    @Test("a wrong password gets 401 and no allocation; an old nonce gets 438 with a fresh one")
    func credentials() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        c.password = "wrong"
        let (relay, r) = allocate(&turn, &c, now: t0)
        #expect(relay == nil && r?.errorCode?.code == 401)
        #expect(turn.activeAllocations == 0)
        c.password = "p"
        let stale = reply(turn.outputs(after: .clientDatagram(c.request(.allocate, [.requestedTransport(protocolNumber: 17)]),
                                              from: client, to: server), now: t0 + .seconds(601)))
        #expect(stale?.errorCode?.code == 438)
        #expect(stale?.nonce != nil && stale?.nonce != c.nonce)
    }

    @Test("Allocate errors: 400 without transport, 442 for TCP, 440 for IPv6, 420 for unknown attributes, 486 past quota")
    func allocateErrors() {
        var config = configuration()
        config.maxAllocationsPerUser = 1
        var turn = TURNServer(configuration: config, seed: 1)
        var c = Client()
        _ = allocate(&turn, &c, now: t0)
        func code(_ attrs: [STUNAttribute], from: Endpoint) -> Int? {
            reply(turn.outputs(after: .clientDatagram(c.request(.allocate, attrs),
                    from: from, to: server), now: t0))?.errorCode?.code
        }
        let other = try! Endpoint(parsing: "127.0.0.1:40001")
        // Nonces are bound to the 5-tuple they were given to: the second client is challenged for its own.
        let challenge = turn.outputs(after: .clientDatagram(c.request(.allocate, [], sign: false),
                from: other, to: server), now: t0)
        c.nonce = reply(challenge)?.nonce
        #expect(code([], from: other) == 400)
        #expect(code([.requestedTransport(protocolNumber: 6)], from: other) == 442)
        #expect(code([.requestedTransport(protocolNumber: 17), .requestedAddressFamily(.ipv6)], from: other) == 440)
        let unknown = reply(turn.outputs(after: .clientDatagram(
            c.request(.allocate, [.requestedTransport(protocolNumber: 17), .unknown(type: STUNAttributeType(rawValue: 0x0031), value: [1, 2, 3, 4])]),
            from: other, to: server), now: t0))
        #expect(unknown?.errorCode?.code == 420)
        #expect(unknown?.unknownAttributes == [STUNAttributeType(rawValue: 0x0031)])
        #expect(code([.requestedTransport(protocolNumber: 17)], from: other) == 486)
    }

    @Test("EVEN-PORT with R reserves the next port; RESERVATION-TOKEN allocates it")
    func evenPort() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let (relay, r) = allocate(&turn, &c, extra: [.evenPort(reserveNextPort: true)], now: t0)
        let port = try! #require(relay?.port)
        #expect(port % 2 == 0)
        let token = try! #require(r?.reservationToken)
        let other = try! Endpoint(parsing: "127.0.0.1:40002")
        let (second, _) = allocate(&turn, &c, from: other, extra: [.reservationToken(token)], now: t0)
        #expect(second?.port == port + 1)
    }

    @Test("permissions gate both directions; Send and Data indications; ChannelData after ChannelBind")
    func relaying() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let relay = allocate(&turn, &c, now: t0).0!
        let send = try! STUNMessage(method: .send, messageClass: .indication, transactionID: .random(using: &c.rng),
                                    attributes: [.xorPeerAddress(peer), .data([1, 2, 3])]).encode(fingerprint: true)
        #expect(turn.outputs(after: .clientDatagram(send, from: client, to: server), now: t0).isEmpty)
        #expect(turn.outputs(after: .peerDatagram([9], from: peer, relay: relay), now: t0).isEmpty)
        let perm = reply(turn.outputs(after: .clientDatagram(c.request(.createPermission, [.xorPeerAddress(peer)]),
                from: client, to: server), now: t0))
        #expect(perm?.messageClass == .successResponse)
        #expect(turn.outputs(after: .clientDatagram(send,
                from: client, to: server), now: t0) == [.toPeer([1, 2, 3], from: relay, to: peer)])
        let data = reply(turn.outputs(after: .peerDatagram([7, 7], from: peer, relay: relay), now: t0))
        #expect(data?.method == .data && data?.data == [7, 7] && data?.xorPeerAddresses == [peer])

        let bind = reply(turn.outputs(after: .clientDatagram(c.request(.channelBind, [.channelNumber(0x4001), .xorPeerAddress(peer)]),
                                             from: client, to: server), now: t0))
        #expect(bind?.messageClass == .successResponse)
        let frame = try! ChannelData(channel: 0x4001, payload: [5, 5, 5]).encode(padded: true)
        #expect(turn.outputs(after: .clientDatagram(frame,
                from: client, to: server), now: t0) == [.toPeer([5, 5, 5], from: relay, to: peer)])
        guard case .toClient(let back, _, _)? = turn.outputs(after: .peerDatagram([6],
                from: peer, relay: relay), now: t0).first else {
            Issue.record("nothing to the client"); return
        }
        #expect((try? ChannelData(decoding: back))?.payload == [6])
        // An unbound channel is dropped; rebinding rules (RFC 8656 §12.2).
        let stray = try! ChannelData(channel: 0x4002, payload: [1]).encode(padded: true)
        #expect(turn.outputs(after: .clientDatagram(stray, from: client, to: server), now: t0).isEmpty)
        let otherPeer = try! Endpoint(parsing: "127.0.0.1:5001")
        func bindCode(_ n: UInt16, _ p: Endpoint) -> Int? {
            reply(turn.outputs(after: .clientDatagram(c.request(.channelBind, [.channelNumber(n), .xorPeerAddress(p)]),
                                      from: client, to: server), now: t0))?.errorCode?.code
        }
        #expect(bindCode(0x3FFF, peer) == 400)
        #expect(bindCode(0x4001, otherPeer) == 400)
        #expect(bindCode(0x4002, peer) == 400)
        #expect(bindCode(0x4001, peer) == nil)  // refreshing the same binding is fine
    }

    @Test("the fast path's cached ChannelData routes end with the permission, the binding and the allocation")
    func routeCache() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let relay = allocate(&turn, &c, now: t0).0!
        let handle = turn.relayHandle(for: relay)!
        let bind = c.request(.channelBind, [.channelNumber(0x4001), .xorPeerAddress(peer)])
        _ = turn.outputs(after: .clientDatagram(bind, from: client, to: server), now: t0)
        let frame = try! ChannelData(channel: 0x4001, payload: [5, 5, 5]).encode(padded: true)
        func out(_ now: Instant) -> TURNServer.ClientRoute {
            frame.withUnsafeBytes { turn.routeClientDatagram($0, from: client, to: server, now: now) }
        }
        func back(_ from: Endpoint, _ now: Instant) -> TURNServer.PeerRoute {
            turn.routePeerDatagram(length: 3, from: from, handle: handle, now: now)
        }
        // Twice each way: the second answer comes from the cache and must agree.
        for _ in 0..<2 {
            #expect(out(t0) == .toPeer(handle, peer: peer, length: 3))
            #expect(back(peer, t0) == .channel(0x4001, client: client, via: server))
        }
        // The same IP from another port is permitted but has no channel.
        #expect(back(try! Endpoint(parsing: "127.0.0.1:5001"), t0) == .dataIndication)
        // ChannelBind installs a 300 s permission (RFC 8656 §12.2); no timer has run, yet both ways stop.
        let dropped = turn.counters.dropped
        #expect(out(t0 + .seconds(300)) == .dropped)
        #expect(back(peer, t0 + .seconds(300)) == .dropped)
        #expect(turn.counters.dropped == dropped + 2)
        // A new permission brings the route back; deleting the allocation ends it at once.
        _ = turn.outputs(after: .clientDatagram(c.request(.createPermission, [.xorPeerAddress(peer)]),
                                                from: client, to: server), now: t0 + .seconds(301))
        #expect(out(t0 + .seconds(301)) == .toPeer(handle, peer: peer, length: 3))
        #expect(back(peer, t0 + .seconds(301)) == .channel(0x4001, client: client, via: server))
        _ = turn.outputs(after: .clientDatagram(c.request(.refresh, [.lifetime(seconds: 0)]),
                                                from: client, to: server), now: t0 + .seconds(302))
        #expect(turn.activeAllocations == 0)
        #expect(out(t0 + .seconds(302)) == .dropped)
        #expect(back(peer, t0 + .seconds(302)) == .dropped)
        #expect(turn.counters.packetsToPeers == 3 && turn.counters.packetsToClients == 3)
    }

    @Test("permissions expire after 300 s, allocations at their lifetime; lifetime 0 deletes")
    func expiry() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let relay = allocate(&turn, &c, now: t0).0!
        _ = turn.outputs(after: .clientDatagram(c.request(.createPermission, [.xorPeerAddress(peer)]),
                from: client, to: server), now: t0)
        #expect(!turn.outputs(after: .peerDatagram([1], from: peer, relay: relay), now: t0 + .seconds(299)).isEmpty)
        _ = turn.outputs(after: .timer, now: t0 + .seconds(300))
        #expect(turn.outputs(after: .peerDatagram([1], from: peer, relay: relay), now: t0 + .seconds(300)).isEmpty)
        #expect(turn.nextDeadline == t0 + .seconds(600))
        let closed = turn.outputs(after: .timer, now: t0 + .seconds(600))
        #expect(closed.contains(.closeRelay(relay)))
        #expect(turn.activeAllocations == 0)

        let relay2 = allocate(&turn, &c, now: t0 + .seconds(700)).0!
        c.nonce = nil
        let challenge = reply(turn.outputs(after: .clientDatagram(c.request(.refresh, [.lifetime(seconds: 0)], sign: false),
                                                  from: client, to: server), now: t0 + .seconds(700)))
        c.nonce = challenge?.nonce
        let gone = turn.outputs(after: .clientDatagram(c.request(.refresh, [.lifetime(seconds: 0)]),
                from: client, to: server), now: t0 + .seconds(700))
        #expect(gone.contains(.closeRelay(relay2)))
        #expect(reply(gone)?.lifetime == 0)
    }

    @Test("loopback and private peers are refused unless allowed")
    func peerPolicy() {
        var config = configuration()
        config.peerPolicy.allowLoopback = false
        var turn = TURNServer(configuration: config, seed: 1)
        var c = Client()
        _ = allocate(&turn, &c, now: t0)
        let r = reply(turn.outputs(after: .clientDatagram(c.request(.createPermission, [.xorPeerAddress(peer)]),
                from: client, to: server), now: t0))
        #expect(r?.errorCode?.code == 403)
        var policy = PeerAddressPolicy()
        #expect(!policy.permits(try! IPAddress(parsing: "10.1.2.3")) && policy.permits(try! IPAddress(parsing: "8.8.8.8")))
        policy.allow = [try! CIDR(parsing: "10.0.0.0/8")]
        policy.deny = [try! CIDR(parsing: "8.8.8.0/24")]
        #expect(policy.permits(try! IPAddress(parsing: "10.1.2.3")) && !policy.permits(try! IPAddress(parsing: "8.8.8.8")))
    }

    @Test("TURN REST credentials: expiry:user with an HMAC-SHA1 password; expired ones are refused")
    func restCredentials() {
        var turn = TURNServer(configuration: configuration(.sharedSecret("s3cret")), seed: 1)
        func password(_ user: String) -> String {
            Data(HMAC<SHA1>.authenticationCode(for: Array(user.utf8), key: Array("s3cret".utf8))).base64EncodedString()
        }
        let expiry = t0.nanosecondsSinceEpoch / 1_000_000_000 + 3600
        var c = Client(user: "\(expiry):alice", password: password("\(expiry):alice"))
        #expect(allocate(&turn, &c, now: t0).0 != nil)
        var old = Client(user: "\(expiry - 7200):alice", password: password("\(expiry - 7200):alice"))
        #expect(allocate(&turn, &old, from: try! Endpoint(parsing: "127.0.0.1:40009"), now: t0).1?.errorCode?.code == 401)
    }

    @Test("a failed relay bind moves the allocation to another port, and after 8 ports withdraws it with 508")
    func bindFailure() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        var relay = allocate(&turn, &c, now: t0).0!
        var tried: Set<Endpoint> = [relay]
        for _ in 1..<8 {
            let actions = turn.outputs(after: .relayBindFailed(relay), now: t0)
            guard case .openRelay(let moved, let response, let client, _)? = actions.first else {
                Issue.record("no new relayed port: \(actions)")
                return
            }
            // The client hears of the new address only, with the original transaction's success.
            let answer = try? STUNMessage(decoding: response)
            #expect(client == self.client && answer?.xorRelayedAddress == moved && answer?.lifetime == 600)
            #expect(!tried.contains(moved) && turn.byRelay[relay] == nil && turn.byRelay[moved] != nil)
            tried.insert(moved)
            relay = moved
        }
        let r = reply(turn.outputs(after: .relayBindFailed(relay), now: t0))
        #expect(r?.errorCode?.code == 508)
        #expect(turn.activeAllocations == 0)
        // A port chosen by EVEN-PORT is not moved: 508 at once.
        var even = Client()
        let evenRelay = allocate(&turn, &even, from: try! Endpoint(parsing: "127.0.0.1:40100"),
                                 extra: [.evenPort(reserveNextPort: false)], now: t0).0!
        #expect(reply(turn.outputs(after: .relayBindFailed(evenRelay), now: t0))?.errorCode?.code == 508)
    }

    @Test("20,000 seeded hostile datagrams: no crash, nothing relayed, the server still answers")
    func hostile() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let relay = allocate(&turn, &c, now: t0).0!
        var random = SeededRandom(seed: 77)
        let seeds = [c.request(.allocate, [.requestedTransport(protocolNumber: 17)]),
                     try! ChannelData(channel: 0x4000, payload: [1, 2]).encode(padded: true)]
        for i in 0..<20_000 {
            var bytes = seeds[i % 2]
            for _ in 0..<(1 + Int(random.next() % 4)) { bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next()) }
            if i % 3 == 0 { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count)))) }
            for action in turn.outputs(after: .clientDatagram(bytes, from: client, to: server), now: t0) {
                if case .toPeer = action { Issue.record("relayed a mangled datagram") }
            }
        }
        let malformed = turn.counters.malformed
        let active = turn.activeAllocations
        let stillRelaying = turn.byRelay[relay] != nil
        #expect(malformed > 0)
        #expect(active == 1)
        #expect(stillRelaying)
        let r = reply(turn.outputs(after: .clientDatagram(c.request(.binding, [], sign: false),
                from: client, to: server), now: t0))
        #expect(r?.xorMappedAddress == client)
    }
}
