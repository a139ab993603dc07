import ICE
import Peer
import Testing
import TURN
import ZoneCore

/// ICETransport with TURN relays, against our TURN server engine in memory (RFC 8445 §5.1.1.2,
/// RFC 8656).
@Suite("ICETransport with relays")
struct ICETransportRelayTests {
    @Test("two relay-only transports connect through the TURN server and pass data both ways")
    func relayOnlyBothSides() throws {
        let net = try RelayNetwork(relayOnly: (true, true))
        #expect(net.run(for: .seconds(30)) { $0.bothConnected })
        for i in 0..<2 {
            let relayed = try #require(net.transports[i].relayedAddresses.first)
            // Only the relayed candidate was announced, and it carries the call.
            #expect(net.announced(i).map(\.kind) == [.relay])
            #expect(net.announced(i).first?.address == relayed)
            #expect(net.events[i].contains(.relayAllocated(relayed: relayed, server: RelayNetwork.serverAddress)))
            let pair = try #require(net.transports[i].selectedPair)
            #expect(pair.local.kind == .relay && pair.local.address == relayed)
            #expect(pair.remote.address == net.transports[1 - i].relayedAddresses.first)
        }
        // Every datagram either transport sent went to the TURN server.
        #expect(net.wire.allSatisfy { $0.to == RelayNetwork.serverAddress })

        try net.transports[0].send(Array("hello right".utf8))
        try net.transports[1].send(Array("hello left".utf8))
        for n in 0..<20 { try net.transports[n % 2].send([UInt8(n)]) }
        net.run(for: .seconds(1))
        #expect(net.received(1).first == Array("hello right".utf8))
        #expect(net.received(0).first == Array("hello left".utf8))
        let evens: [[UInt8]] = stride(from: 0, to: 20, by: 2).map { [UInt8($0)] }
        let odds: [[UInt8]] = stride(from: 1, to: 20, by: 2).map { [UInt8($0)] }
        #expect(Array(net.received(1).dropFirst()) == evens)
        #expect(Array(net.received(0).dropFirst()) == odds)
        #expect(net.server.counters.packetsToPeers >= 22)

        // Closing deallocates both relays on the server.
        net.transports[0].close(now: net.now)
        net.transports[1].close(now: net.now)
        net.run(for: .seconds(5))
        #expect(net.server.activeAllocations == 0)
        #expect(net.transports.allSatisfy { $0.nextDeadline == nil })
    }

    @Test("relay-only on one side: the other side's host candidate pairs with the relayed one")
    func relayOnlyOneSide() throws {
        let net = try RelayNetwork(relayOnly: (true, false), turn: (true, false))
        #expect(net.run(for: .seconds(30)) { $0.bothConnected })
        #expect(net.announced(0).map(\.kind) == [.relay])
        #expect(net.announced(1).map(\.kind) == [.host])
        #expect(net.transports[0].selectedPair?.local.kind == .relay)
        #expect(net.transports[1].selectedPair?.remote.address == net.transports[0].relayedAddresses.first)
        try net.transports[1].send([1, 2, 3])
        try net.transports[0].send([4, 5, 6])
        net.run(for: .seconds(1))
        #expect(net.received(0) == [[1, 2, 3]] && net.received(1) == [[4, 5, 6]])
    }

    @Test("with relays but not relay-only, both candidates are announced and the direct path wins")
    func relayAndHost() throws {
        let net = try RelayNetwork(relayOnly: (false, false))
        #expect(net.run(for: .seconds(30)) { $0.bothConnected })
        net.run(for: .seconds(2))
        #expect(Set(net.announced(0).map(\.kind)) == [.host, .relay])
        #expect(net.transports[0].selectedPair?.local.kind == .host)
        // End of gathering waited for the relayed candidate.
        let gathered = try #require(net.events[0].firstIndex(of: .gatheringComplete))
        let relay = try #require(net.events[0].firstIndex { event in
            if case .localCandidate(let c) = event { c.kind == .relay } else { false }
        })
        #expect(relay < gathered)
    }

    @Test("when the direct path is blocked, the relayed pair carries the call")
    func fallbackToRelay() throws {
        let net = try RelayNetwork(relayOnly: (false, false))
        net.blockDirect = true
        #expect(net.run(for: .seconds(30)) { $0.bothConnected })
        let pair = try #require(net.transports[0].selectedPair)
        #expect(pair.local.kind == .relay || pair.remote.kind == .relay)
        try net.transports[0].send([9])
        net.run(for: .seconds(1))
        #expect(net.received(1) == [[9]])
    }

    @Test("a wrong TURN password: relayFailed with 401, and gathering still completes")
    func wrongPassword() throws {
        let net = try RelayNetwork(relayOnly: (false, false), password: "nope")
        net.run(for: .seconds(30)) { $0.bothConnected }
        for i in 0..<2 {
            #expect(net.events[i].contains { if case .relayFailed(_, 401, _) = $0 { true } else { false } })
            #expect(net.events[i].contains(.gatheringComplete))
            #expect(net.transports[i].relayedAddresses.isEmpty)
        }
        #expect(net.bothConnected)  // on host candidates
    }
}
