// A controlled agent whose check succeeded waits for the controlling agent's nomination; with
// end-of-candidates signalled and nothing left to check, it is still not failed (RFC 8445
// §8.1.2: a checklist fails when every pair failed). The simulator found this: the answerer
// reported ICE failure between its first successful check and the offerer's nomination.

import STUN
import Testing
import ZoneCore
@testable import ICE

@Suite struct AwaitingNominationTests {
    @Test func controlledAgentWithASucceededPairIsNotFailed() throws {
        let now = Instant.seconds(1_700_000_000)
        let local = try Endpoint(parsing: "10.0.0.2:6000")
        let remote = try Endpoint(parsing: "10.0.0.1:5000")
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [local], role: .controlled, credentials: Harness.credentialsB, seed: 3), now: now)
        try agent.setRemoteCredentials(Harness.credentialsA)
        agent.addRemoteCandidate(.remote(kind: .host, address: remote, priority: 2_130_706_431, foundation: "1"))
        agent.endOfRemoteCandidates()
        agent.handle(.timer, now: now)
        var request: STUNMessage?
        while let output = agent.pollOutput() {
            if case .transmit(let bytes, _, let to) = output, to == remote { request = try STUNMessage(decoding: bytes) }
        }
        let check = try #require(request, "the agent sent no check")
        let key = try STUNIntegrityKey.shortTerm(password: Harness.credentialsA.password)
        let response = try check.successResponse(attributes: [.xorMappedAddress(local)]).encode(key: key, fingerprint: true)
        agent.handle(.datagram(response, from: remote, to: local), now: now + .milliseconds(10))
        #expect(agent.pairs.contains { $0.state == .succeeded })
        #expect(agent.selectedPair == nil)
        #expect(agent.state == .checking, "the agent gave up while waiting for nomination: \(agent.state)")
    }
}
