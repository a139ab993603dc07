// Relayed local candidates handed in by the caller (RFC 8445 §5.1.1.2, §5.1.2.2, §6.1.2), and the
// triggered check on a pair whose check is in flight (§7.3.1.4) and the check RTO (§14.3).

import STUN
import Testing
import ZoneCore
@testable import ICE

@Suite struct RelayedCandidateTests {
    let relayed = try! Endpoint(parsing: "203.0.113.9:50001")
    let turnServer = try! Endpoint(parsing: "203.0.113.9:3478")
    let remote = Candidate.remote(kind: .host, address: try! Endpoint(parsing: "198.51.100.4:7000"),
                                  priority: 2_130_706_431, foundation: "1")

    func drain(_ agent: inout ICEAgent) -> [ICEAgent.Output] {
        var outputs: [ICEAgent.Output] = []
        while let output = agent.pollOutput() { outputs.append(output) }
        return outputs
    }

    @Test func relayedCandidateIsAnnouncedPairedAndChecksLeaveFromIt() throws {
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [], role: .controlling, credentials: Harness.credentialsA,
            expectedRelayedCandidates: 1, seed: 3), now: .seconds(1))
        try agent.setRemoteCredentials(Harness.credentialsB)
        // Gathering waits for the relayed candidate.
        #expect(!drain(&agent).contains(.event(.gatheringComplete)))
        agent.addRemoteCandidate(remote)
        agent.addLocalRelayedCandidate(relayed: relayed, server: turnServer)
        let outputs = drain(&agent)
        let expected = Candidate.relayed(relayed, server: turnServer)
        #expect(outputs.contains(.event(.localCandidate(expected))))
        #expect(outputs.contains(.event(.gatheringComplete)))
        #expect(expected.kind == .relay && expected.base == relayed && expected.priority == 16_777_215)
        #expect(expected.foundation == CandidateFoundation.compute(kind: .relay, base: relayed.address,
                                                                   server: turnServer.address))
        #expect(agent.pairs.count == 1 && agent.pairs[0].local == expected && agent.pairs[0].state == .waiting)
        agent.handle(.timer, now: .seconds(1))
        let checks = drain(&agent).compactMap { output -> (Endpoint, Endpoint)? in
            if case .transmit(_, let from, let to) = output { (from, to) } else { nil }
        }
        #expect(checks.count == 1 && checks[0] == (relayed, remote.address))
    }

    @Test func relayedCandidateUnavailableCompletesGathering() throws {
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [Harness.hostA], role: .controlled, credentials: Harness.credentialsA,
            expectedRelayedCandidates: 2, seed: 3), now: .seconds(1))
        #expect(!drain(&agent).contains(.event(.gatheringComplete)))
        agent.addLocalRelayedCandidate(relayed: relayed, server: turnServer)
        #expect(!drain(&agent).contains(.event(.gatheringComplete)))
        agent.relayedCandidateUnavailable()
        #expect(drain(&agent).contains(.event(.gatheringComplete)))
        #expect(agent.isGatheringComplete && agent.localCandidates.map(\.kind) == [.host, .relay])
    }

    @Test func relayOnlyAgentDoesNotFailWhileItsAllocationIsOnItsWay() throws {
        // The remote's candidates and end-of-candidates can arrive before our only (relayed) candidate:
        // no pairs yet is not every pair failed (RFC 8838 §8). A group call's answerer once restarted here.
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [], role: .controlling, credentials: Harness.credentialsA,
            expectedRelayedCandidates: 1, seed: 3), now: .seconds(1))
        try agent.setRemoteCredentials(Harness.credentialsB)
        agent.addRemoteCandidate(remote)
        agent.endOfRemoteCandidates()
        agent.handle(.timer, now: .seconds(2))
        #expect(!drain(&agent).contains(.event(.stateChanged(.failed))) && agent.state != .failed)
        // Once gathering ends with nothing to pair, the checklist has failed.
        agent.relayedCandidateUnavailable()
        #expect(drain(&agent).contains(.event(.stateChanged(.failed))) && agent.state == .failed)
    }

    @Test func relayedPairsConnectBackToBack() {
        // Agent A has only a relayed candidate; the harness delivers "to" it as if through TURN.
        let relay = relayed
        let harness = Harness(hosts: ([Harness.hostA], [Harness.hostB])) { config in
            if config.credentials == Harness.credentialsA { config.expectedRelayedCandidates = 1 }
        }
        harness.relayed[relay] = 0
        harness.agents[0].addLocalRelayedCandidate(relayed: relay, server: turnServer)
        #expect(harness.run(for: .seconds(10)) { $0.bothConnected })
        harness.run(for: .seconds(2))
        // The relayed pair has the lowest priority, so host pairs win when both work…
        #expect(harness.a.selectedPair?.local.kind == .host)
        #expect(harness.a.pairs.contains { $0.local.kind == .relay && $0.state == .succeeded })
    }

    @Test func inFlightPairGetsANewTriggeredCheckAndTheOldOneStops() throws {
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [Harness.hostA], role: .controlled, credentials: Harness.credentialsA, seed: 3),
            now: .seconds(1))
        try agent.setRemoteCredentials(Harness.credentialsB)
        agent.addRemoteCandidate(remote)
        _ = drain(&agent)
        agent.handle(.timer, now: .seconds(1))
        let first = drain(&agent).compactMap { if case .transmit(let b, _, _) = $0 { b } else { nil } }
        #expect(first.count == 1 && agent.pairs[0].state == .inProgress)
        let firstID = try STUNMessage(decoding: first[0]).transactionID

        // The peer's check on the same pair arrives while ours is in flight.
        let request = STUNMessage(method: .binding, messageClass: .request,
                                  transactionID: STUNTransactionID(high: 1, low: 1),
                                  attributes: [.username("AAAA:BBBB"), .priority(1), .iceControlling(tieBreaker: 9)])
        let key = try STUNIntegrityKey.shortTerm(password: Harness.credentialsA.password)
        let bytes = try request.encode(key: key, fingerprint: true)
        agent.handle(.datagram(bytes, from: remote.address, to: Harness.hostA), now: .milliseconds(1_010))
        _ = drain(&agent)  // the response
        #expect(agent.pairs[0].state == .waiting)
        // Next pacing tick: a new check with a new transaction; the old one is never resent.
        var ids: [STUNTransactionID] = []
        var t = Instant.milliseconds(1_020)
        while t < .seconds(20) {
            agent.handle(.timer, now: t)
            for case .transmit(let b, _, _) in drain(&agent) {
                if let m = try? STUNMessage(decoding: b), m.messageClass == .request { ids.append(m.transactionID) }
            }
            t = agent.nextDeadline ?? .seconds(20)
        }
        #expect(ids.first != nil && ids.first != firstID)
        #expect(!ids.contains(firstID))
        #expect(Set(ids).count == 1)  // the new check, retransmitted
    }

    @Test func checkRTOGrowsWithTheChecklist() throws {
        // RFC 8445 §14.3: RTO = MAX(floor, Ta × pending pairs). 20 pairs × 20 ms = 400 ms > 100 ms.
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [Harness.hostA], role: .controlling, credentials: Harness.credentialsA, seed: 3),
            now: .seconds(1))
        try agent.setRemoteCredentials(Harness.credentialsB)
        for port in 0..<20 {
            agent.addRemoteCandidate(.remote(kind: .host, address: Endpoint(address: remote.address.address,
                                                                            port: 7000 + UInt16(port)),
                                             priority: 100, foundation: "f\(port)"))
        }
        _ = drain(&agent)
        agent.handle(.timer, now: .seconds(1))
        let sent = drain(&agent).compactMap { if case .transmit(let b, _, let to) = $0 { (b, to) } else { nil } }
        let target = try #require(sent.first?.1)
        // Retransmission of that first check comes 400 ms later, not 100 ms.
        var resentAt: Instant?
        var t = Instant.seconds(1)
        while resentAt == nil, t < .seconds(3) {
            t = t + .milliseconds(10)
            agent.handle(.timer, now: t)
            for case .transmit(let b, _, let to) in drain(&agent) where to == target && b == sent[0].0 {
                resentAt = t
            }
        }
        #expect(resentAt == .milliseconds(1_400))
    }
}
