// Remote candidates come from the other peer's signal records: a hostile peer trickling 10,000
// of them must not grow the checklist (and the checks this agent sends) without bound.

import Testing
import ZoneCore
@testable import ICE

@Suite struct RemoteCandidateLimitTests {
    @Test func tenThousandRemoteCandidatesAreCappedAndCounted() throws {
        let now = Instant.seconds(1_700_000_000)
        var agent = try ICEAgent(configuration: AgentConfiguration(
            hostAddresses: [try Endpoint(parsing: "10.0.0.2:6000")], role: .controlling,
            credentials: Harness.credentialsA, seed: 3), now: now)
        try agent.setRemoteCredentials(Harness.credentialsB)
        for i in 0..<10_000 {
            let address = try Endpoint(parsing: "10.1.\(i / 250).\(i % 250 + 1):\(5000 + i % 1000)")
            agent.addRemoteCandidate(.remote(kind: .host, address: address, priority: 1, foundation: "\(i)"))
        }
        let limit = agent.configuration.maxRemoteCandidates
        #expect(agent.remoteCandidates.count == limit)
        #expect(agent.droppedRemoteCandidates == 10_000 - limit)
        #expect(agent.pairs.count <= limit)
    }
}
