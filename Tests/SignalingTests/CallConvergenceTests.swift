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
        // B waits for A's offer and never offers. (It may go from preparing straight to connecting: while it
        // looks up the answer of the session's epoch, PROTOCOL.md §5, the offer can already have arrived.)
        #expect(h.b.reports.first == .preparing)
        #expect(!h.b.reports.contains { if case .offering = $0 { true } else { false } }, "\(h.b.reports)")
        for peer in h.peers {
            #expect(peer.ice.resets == 0 && peer.ice.duplicateDescriptions == 0 && peer.ice.duplicateCandidates == 0)
            #expect(peer.ice.candidateErrors == 0 && peer.ice.wrongUfragCandidates == 0)
            #expect(peer.counters.resets == 0)
        }
    }

    /// User IDs long enough that every signal record name is compacted (spec §2, concern G).
    @Test func longUserIDsConnectThroughCompactedNames() async throws {
        let a = "_a" + String(repeating: "1", count: 140)
        let b = "_b" + String(repeating: "2", count: 140)
        let h = try await CallHarness(users: (a, b))
        await h.startCall()
        #expect(await h.connect(within: .seconds(20)))
        let key = h.a.negotiator.sessionKey.rawValue
        let signals = try await h.zoneRecords(as: h.a).filter { SignalRecordType.signalTypes.contains($0.recordType) }
        #expect(signals.count >= 7)
        for record in signals {
            #expect(record.id.recordName.utf8.count <= 255)
            #expect(record.id.recordName.contains(SignalRecordNames.compact(key)))
            #expect(record.fields[SignalField.sessionKey]?.stringValue == key)
        }
    }

    /// Change tokens kept from one call to the next (spec §5): the second call fetches only what
    /// changed since, so the first call's records never reach its inbox.
    @Test func keptTokensSkipThePreviousCallsRecords() async throws {
        let h = try await CallHarness(a: .standard(.pollToken), b: .standard(.pollToken))
        await h.startCall()
        #expect(await h.connect(within: .seconds(20)))
        for p in h.peers { await p.send(.hangUp, now: h.now) }
        #expect(h.a.signaling.tokens.first?.zone != nil)
        try h.newCall(keepTokens: true)
        await h.startCall()
        #expect(await h.connect(within: .seconds(20)))
        for p in h.peers {
            #expect(p.counters.inbox.staleDrops == 0, "the old records came again")
            #expect(p.counters.recordsFetched < 15, "\(p.counters.recordsFetched) records fetched")
        }
    }
}
