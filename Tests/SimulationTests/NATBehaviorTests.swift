// RFC 4787 behaviours of the virtual NATs, datagram by datagram: which mapping an outbound
// datagram gets (§4.1) and which inbound datagrams pass the filter (§5).
import Simulation
import Testing
import ZoneCore

@Suite("Virtual NATs (RFC 4787)")
struct NATBehaviorTests {
    static let inside = Endpoint(address: .v4(0x0A01_0002), port: 5000)  // 10.1.0.2:5000
    static let natAddress = IPAddress.v4(0xC633_640A)  // 198.51.100.10
    static let server = Endpoint(address: .v4(0xCB00_7164), port: 3478)  // 203.0.113.100:3478
    static let serverOtherPort = Endpoint(address: .v4(0xCB00_7164), port: 3479)
    static let stranger = Endpoint(address: .v4(0xCB00_7165), port: 3478)  // 203.0.113.101:3478
    static let now = Instant.seconds(1_700_000_000)

    /// A network with one host behind a NAT of `behavior` and three public hosts.
    final class Setup {
        var network = VirtualNetwork(seed: 7)
        let host: HostID
        let publicHosts: [HostID]

        init(_ behavior: NATBehavior) {
            host = network.addHost("inside", address: NATBehaviorTests.inside.address, link: .ideal, behind: behavior,
                                   publicAddress: NATBehaviorTests.natAddress)
            publicHosts = [network.addHost("server", address: NATBehaviorTests.server.address, link: .ideal),
                           network.addHost("stranger", address: NATBehaviorTests.stranger.address, link: .ideal)]
        }

        /// Sends from inside to `to`; returns the mapped source the receiver sees.
        func out(to: Endpoint, at now: Instant = NATBehaviorTests.now) -> Endpoint {
            let copies = try! network.send([1], from: NATBehaviorTests.inside, to: to, host: host, now: now).get()
            return copies[0].datagram.source
        }

        /// Sends from `from` to the NAT's `port`; true when it reaches the inside host.
        func reaches(from: Endpoint, port: UInt16, at now: Instant = NATBehaviorTests.now) -> Bool {
            let sender = from.address == NATBehaviorTests.server.address ? publicHosts[0] : publicHosts[1]
            let to = Endpoint(address: NATBehaviorTests.natAddress, port: port)
            guard case .success(let copies) = network.send([2], from: from, to: to, host: sender, now: now) else {
                return false
            }
            guard case .success(let arrival) = network.arrive(copies[0].datagram, now: now) else { return false }
            return arrival.host == host && arrival.to == NATBehaviorTests.inside
        }
    }

    @Test func fullConeMapsOnceAndLetsAnyoneIn() {
        let s = Setup(.fullCone)
        let mapped = s.out(to: Self.server)
        #expect(mapped.address == Self.natAddress)
        #expect(s.out(to: Self.stranger) == mapped, "endpoint-independent mapping reuses the mapping")
        let fresh = Setup(.fullCone)
        let port = fresh.out(to: Self.server).port
        #expect(fresh.reaches(from: Self.stranger, port: port), "endpoint-independent filtering admits anyone")
        #expect(!fresh.reaches(from: Self.stranger, port: port &+ 1), "no mapping on another port")
    }

    @Test func restrictedConeFiltersByAddress() {
        let s = Setup(.restrictedCone)
        let port = s.out(to: Self.server).port
        #expect(s.reaches(from: Self.serverOtherPort, port: port), "same address, other port passes")
        #expect(!s.reaches(from: Self.stranger, port: port), "another address is filtered")
    }

    @Test func portRestrictedConeFiltersByAddressAndPort() {
        let s = Setup(.portRestrictedCone)
        let port = s.out(to: Self.server).port
        #expect(s.out(to: Self.stranger).port == port, "mapping is still endpoint-independent")
        #expect(s.reaches(from: Self.server, port: port))
        #expect(!s.reaches(from: Self.serverOtherPort, port: port), "same address, other port is filtered")
        let t = Setup(.portRestrictedCone)
        let p = t.out(to: Self.server).port
        #expect(!t.reaches(from: Self.stranger, port: p), "an address never contacted is filtered")
    }

    @Test func symmetricMapsPerDestination() {
        let s = Setup(.symmetric)
        let a = s.out(to: Self.server)
        let b = s.out(to: Self.serverOtherPort)
        let c = s.out(to: Self.stranger)
        #expect(a.port != b.port && a.port != c.port && b.port != c.port, "a new mapping per remote endpoint")
        #expect(s.out(to: Self.server) == a, "the same remote endpoint reuses its mapping")
        #expect(s.reaches(from: Self.server, port: a.port))
        // What the STUN server saw (mapping a) is useless to anyone else.
        #expect(!s.reaches(from: Self.stranger, port: a.port))
        #expect(!s.reaches(from: Self.serverOtherPort, port: a.port))
    }

    @Test func idleMappingsExpireAndOutboundRefreshesThem() {
        var behavior = NATBehavior.fullCone
        behavior.mappingLifetime = .seconds(30)
        let s = Setup(behavior)
        let port = s.out(to: Self.server).port
        #expect(s.reaches(from: Self.stranger, port: port, at: Self.now + .seconds(29)))
        _ = s.out(to: Self.server, at: Self.now + .seconds(29))  // refresh (RFC 4787 REQ-6)
        #expect(s.reaches(from: Self.stranger, port: port, at: Self.now + .seconds(58)))
        #expect(!s.reaches(from: Self.stranger, port: port, at: Self.now + .seconds(60)), "expired after 30 s idle")
        #expect(s.out(to: Self.server, at: Self.now + .seconds(61)).port != port, "a new mapping after expiry")
    }

    @Test func privateAddressesAreUnroutableFromOutside() {
        let s = Setup(.fullCone)
        let result = s.network.send([3], from: Self.server, to: Self.inside, host: s.publicHosts[0], now: Self.now)
        guard case .failure(let reason) = result else {
            Issue.record("a private address was reached from outside")
            return
        }
        #expect(reason == .unroutable)
    }

    @Test("names for --nat parse, A/B gives one per side; bad names say what to write")
    func natSetupNames() throws {
        #expect(try NATSetup.parse("none") == NATSetup.both(nil))
        #expect(try NATSetup.parse("symmetric").needsRelay)
        #expect(try !NATSetup.parse("symmetric/full-cone").needsRelay)
        #expect(try NATSetup.parse("symmetric/full-cone").description == "symmetric/full-cone")
        #expect(throws: NATSetup.ParseError.self) { try NATSetup.parse("cone") }
        #expect(throws: NATSetup.ParseError.self) { try NATSetup.parse("a/b/c") }
    }
}
