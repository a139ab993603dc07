import RecordStore
import Testing
import ZoneCore

@testable import Signaling

/// Two peers negotiate through the embedded store under each sync strategy and connect.
@Suite("Call convergence")
struct CallConvergenceTests {
    @Test("each strategy connects a call", arguments: SyncStrategy.allCases)
    func strategyConnects(strategy: SyncStrategy) async throws {
        let h = try await CallHarness(a: .standard(strategy), b: .standard(strategy))
        await h.startCall()
        #expect(await h.connect(within: .seconds(20)), "A \(h.a.state), B \(h.b.state)")
        let epoch = try #require(h.a.ice.connectedEpoch)
        #expect(h.a.reports.contains(.offering(epoch)))
        #expect(h.b.reports.first == .preparing && h.b.reports.contains(.waitingForOffer))
        for peer in h.peers {
            #expect(peer.ice.resets == 0 && peer.ice.duplicateDescriptions == 0 && peer.ice.duplicateCandidates == 0)
            #expect(peer.ice.candidateErrors == 0 && peer.ice.wrongUfragCandidates == 0)
            #expect(peer.counters.resets == 0)
        }
    }
}
