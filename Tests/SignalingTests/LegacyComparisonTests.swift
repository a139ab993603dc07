// The twelve stale-epoch scenarios under the `legacy` configuration (the reference design's
// defects) next to ours: the table of the closing note comes from here. Legacy's outcomes are
// reported, and its best-known failures asserted so that a change which quietly "fixes" legacy
// (and so stops measuring the reference design) is noticed.
import Testing

@testable import Signaling

@Suite("Legacy configuration against ours")
struct LegacyComparisonTests {
    @Test("legacy is selectable by name and never the default")
    func legacyByName() throws {
        let legacy = try #require(SignalingConfiguration.named("legacy"))
        #expect(legacy.name == "legacy" && legacy.ingestion.count == 3)
        #expect(legacy.negotiator.protections == .none && legacy.negotiator.garbageCollection == nil)
        #expect(legacy.ingestion.contains { $0.strategy == .pollFullScan && $0.pollsOnlyWhileNegotiating })
        #expect(SignalingConfiguration.default.name == "standard")
        #expect(SignalingConfiguration.default.negotiator.protections == .all)
        #expect(SignalingConfiguration.named("poll-token")?.ingestion.map(\.strategy) == [.pollToken])
        #expect(SignalingConfiguration.named("bogus") == nil)
    }

    @Test("each scenario under legacy and ours", arguments: StaleEpochScenarios.all.map(\.0))
    func scenario(number: String) async throws {
        let run = try #require(StaleEpochScenarios.all.first { $0.0 == number }?.1)
        let legacy = try await run(.legacy)
        let ours = try await run(.ours)
        print("LEGACY-VS-OURS \(number) legacy: \(legacy)")
        print("LEGACY-VS-OURS \(number) ours:   \(ours)")
        #expect(ours.violations.isEmpty)
        switch number {
        case "02": #expect(legacy.resets > 0, "\(legacy)")
        case "03": #expect(legacy.duplicateApplies > 0, "\(legacy)")
        case "04", "08", "09": #expect(!legacy.violations.isEmpty, "\(legacy)")
        case "11": #expect(legacy.staleApplications > 0 && legacy.recordsFetched > ours.recordsFetched, "\(legacy)")
        default: break
        }
    }
}
