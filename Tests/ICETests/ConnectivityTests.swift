// Two agents back to back on the simulated network: RFC 8445 end to end, with trickle (RFC 8838),
// role conflicts (§7.3.1.1, §7.2.5.1), peer-reflexive candidates (§7.2.5.3.1, §7.3.1.3), restart (§9)
// and consent (RFC 7675).

import STUN
import Testing
import ZoneCore
@testable import ICE

@Suite struct ConnectivityTests {
    @Test func directOverHostCandidates() throws {
        let h = Harness()
        #expect(h.run(for: .seconds(5)) { $0.bothConnected })
        let selectedA = try #require(h.a.selectedPair)
        let selectedB = try #require(h.b.selectedPair)
        #expect(selectedA.sendFrom == Harness.hostA && selectedA.sendTo == Harness.hostB)
        #expect(selectedB.sendFrom == Harness.hostB && selectedB.sendTo == Harness.hostA)
        #expect(selectedA.nominated && selectedB.nominated)
        // Within a few RTTs (5 ms each way) and pacing steps.
        #expect(h.now - Instant.seconds(1_700_000_000) < .milliseconds(200))
        // Gathering done and end-of-candidates on both sides: completed once nothing is pending.
        #expect(h.run(for: .seconds(2)) { $0.a.state == .completed && $0.b.state == .completed })

        try h.agents[0].send([0xDE, 0xAD])
        try h.agents[1].send([0xBE, 0xEF])
        h.run(for: .milliseconds(50))
        #expect(h.received[1] == [[0xDE, 0xAD]])
        #expect(h.received[0] == [[0xBE, 0xEF]])
        #expect(h.a.role == .controlling && h.b.role == .controlled)
    }

    @Test func aggressiveNominationConnects() throws {
        let h = Harness(nomination: .aggressive)
        #expect(h.run(for: .seconds(5)) { $0.bothConnected })
        #expect(h.a.selectedPair?.sendTo == Harness.hostB)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func lossyNetworkStillConnects(seed: UInt64) {
        let h = Harness(seed: seed, path: PathModel(latency: .milliseconds(20), loss: 0.3))
        #expect(h.run(for: .seconds(30)) { $0.bothConnected })
        #expect(h.a.selectedPair?.sendTo == Harness.hostB && h.b.selectedPair?.sendTo == Harness.hostA)
    }

    @Test func reorderedAndDelayed() {
        let h = Harness(seed: 9, path: PathModel(latency: .milliseconds(80), jitter: .milliseconds(150)),
                        hosts: ([Harness.hostA, try! Endpoint(parsing: "10.0.1.1:5001")],
                                [Harness.hostB, try! Endpoint(parsing: "10.0.1.2:6001")]))
        #expect(h.run(for: .seconds(30)) { $0.bothConnected })
        // Reordering really happened: some datagram arrived behind a later one.
        #expect(h.arrivals != h.arrivals.sorted())
        // Both agents agree on the path.
        #expect(h.a.selectedPair?.sendTo == h.b.selectedPair?.sendFrom)
        #expect(h.b.selectedPair?.sendTo == h.a.selectedPair?.sendFrom)
    }

    @Test(arguments: [Role.controlling, Role.controlled])
    func roleConflictIsResolved(both role: Role) throws {
        let h = Harness(roles: (role, role), tieBreakers: (10, 20))
        #expect(h.run(for: .seconds(10)) { $0.bothConnected })
        // The larger tie-breaker (B's) ends up controlling, whichever role both started in.
        #expect(h.b.role == .controlling)
        #expect(h.a.role == .controlled)
        #expect(h.a.selectedPair?.sendTo == Harness.hostB)
    }

    @Test(arguments: [Role.controlling, Role.controlled])
    func roleConflictOtherTieBreakerOrder(both role: Role) throws {
        let h = Harness(roles: (role, role), tieBreakers: (.max, 1))
        #expect(h.run(for: .seconds(10)) { $0.bothConnected })
        #expect(h.a.role == .controlling && h.b.role == .controlled)
    }

    @Test func trickleLateCandidatesAndEndOfCandidates() throws {
        let h = Harness(autoTrickle: false)
        h.run(for: .seconds(1))
        #expect(h.a.state == .new && h.b.state == .new)
        // B learns A's candidate first; its checks reach A, which learns B as peer-reflexive.
        h.agents[1].addRemoteCandidate(Harness.remote(h.a.localCandidates[0]))
        #expect(h.run(for: .seconds(5)) { $0.bothConnected })
        #expect(h.a.remoteCandidates.map(\.kind) == [.peerReflexive])
        // The real candidate arrives late and replaces the peer-reflexive one.
        h.agents[0].addRemoteCandidate(Harness.remote(h.b.localCandidates[0]))
        #expect(h.a.remoteCandidates.map(\.kind) == [.host])
        #expect(h.a.state == .connected)  // not completed before end-of-candidates
        h.run(for: .seconds(1))
        #expect(h.a.state == .connected)
        h.agents[0].endOfRemoteCandidates()
        h.agents[1].endOfRemoteCandidates()
        #expect(h.run(for: .seconds(2)) { $0.a.state == .completed && $0.b.state == .completed })
    }

    @Test func failsOnlyAfterEndOfCandidates() throws {
        let h = Harness(autoTrickle: false)
        let nowhere = try Endpoint(parsing: "10.9.9.9:9999")
        h.agents[0].addRemoteCandidate(.remote(kind: .host, address: nowhere, priority: 1, foundation: "x"))
        h.run(for: .seconds(30))
        // Every check timed out, but more candidates may still come.
        #expect(h.a.pairs.allSatisfy { $0.state == .failed })
        #expect(h.a.state == .checking)
        h.agents[0].endOfRemoteCandidates()
        #expect(h.a.state == .failed)
        // A candidate trickled after end-of-candidates revives checking.
        h.agents[0].addRemoteCandidate(Harness.remote(h.b.localCandidates[0]))
        #expect(h.a.state == .checking)
        #expect(h.run(for: .seconds(5)) { $0.a.state == .connected || $0.a.state == .completed })
    }

    @Test func consentLostGoesDisconnectedThenFailed() throws {
        let h = Harness(seed: 5)
        #expect(h.run(for: .seconds(5)) { $0.bothConnected })
        h.run(for: .seconds(12))  // several consent rounds succeed
        #expect(h.bothConnected)
        let silencedAt = h.now
        h.silenced = [1]  // B stops answering
        h.run(for: .seconds(40))
        let disconnected = try #require(h.times(0, reached: .disconnected).first)
        let failed = try #require(h.times(0, reached: .failed).first)
        // The last response came at most one consent period (≤ 6 s + RTT) before the silence.
        #expect(disconnected > silencedAt + .seconds(3) && disconnected <= silencedAt + .seconds(10))
        #expect(failed - disconnected == .seconds(20))  // 30 s expiry − 10 s disconnected
        #expect(h.a.state == .failed)
        #expect(throws: ICEError.self) { try h.agents[0].send([0]) }
        // After failing, A sends nothing more to B.
        let after = h.log.filter { $0.sender == 0 && $0.at > failed }
        #expect(after.isEmpty)
    }

    @Test func consentRecoversFromDisconnected() throws {
        let h = Harness(seed: 6)
        #expect(h.run(for: .seconds(5)) { $0.bothConnected })
        h.silenced = [1]
        #expect(h.run(for: .seconds(20)) { $0.a.state == .disconnected })
        h.silenced = []
        #expect(h.run(for: .seconds(10)) { $0.a.state == .connected || $0.a.state == .completed })
    }

    @Test func peerReflexiveCandidatesThroughOneToOneNAT() throws {
        let h = Harness(seed: 11)
        let publicA = try Endpoint(parsing: "203.0.113.9:40000")
        h.nat = [Harness.hostA: publicA]
        #expect(h.run(for: .seconds(10)) { $0.bothConnected })
        // B learned A's public address from A's checks (RFC 8445 §7.3.1.3) …
        #expect(h.b.remoteCandidates.contains { $0.kind == .peerReflexive && $0.address == publicA })
        #expect(h.b.selectedPair?.sendTo == publicA)
        // … and A learned it from B's responses (§7.2.5.3.1), with its host candidate as base.
        let prflx = try #require(h.a.localCandidates.first { $0.kind == .peerReflexive })
        #expect(prflx.address == publicA && prflx.base == Harness.hostA)
        #expect(h.a.selectedPair?.sendFrom == Harness.hostA)
    }

    @Test func serverReflexiveGathering() throws {
        let server = try Endpoint(parsing: "198.51.100.1:3478")
        let mapped = try Endpoint(parsing: "203.0.113.50:61000")
        let h = Harness(stunServers: [server])
        h.stunServer = server
        h.stunMapped = [Harness.hostA: mapped]
        #expect(h.run(for: .seconds(5)) { $0.bothConnected })
        let srflx = try #require(h.a.localCandidates.first { $0.kind == .serverReflexive })
        #expect(srflx.address == mapped && srflx.base == Harness.hostA)
        #expect(srflx.priority == Priority.candidate(kind: .serverReflexive, localPreference: 65535))
        // B's mapping equals its host address: no srflx candidate for it.
        #expect(!h.b.localCandidates.contains { $0.kind == .serverReflexive })
        // Announced in order: host, srflx, then gathering complete.
        let announced = h.events[0].compactMap { e -> String? in
            switch e.1 {
            case .localCandidate(let c): c.kind.rawValue
            case .gatheringComplete: "done"
            default: nil
            }
        }
        #expect(announced == ["host", "srflx", "done"])
        // The srflx candidate pairs as its base: no redundant pair at B.
        #expect(h.b.pairs.filter { $0.remote.address == Harness.hostA || $0.remote.address == mapped }.count == 2)
        #expect(h.a.pairs.count == 1)
    }

    @Test func unreachableStunServerStillCompletesGathering() throws {
        let server = try Endpoint(parsing: "198.51.100.1:3478")
        let h = Harness(stunServers: [server])
        #expect(h.run(for: .seconds(10)) {
            $0.events[0].contains { if case .gatheringComplete = $0.1 { true } else { false } }
        })
        #expect(h.bothConnected)
    }

    @Test func sameSeedSameTransmits() {
        func transcript(_ seed: UInt64) -> [TransmitRecord] {
            let path = PathModel(latency: .milliseconds(15), jitter: .milliseconds(30), loss: 0.2)
            let h = Harness(seed: seed, path: path)
            h.run(for: .seconds(20))
            return h.log
        }
        let first = transcript(42)
        #expect(first.count > 10)
        #expect(first == transcript(42))
        #expect(first != transcript(43))
    }
}
