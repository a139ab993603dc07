// The stale-epoch regression suite: the twelve scenarios of spec §7, each driving two
// negotiators (through the test driver `CallDriver`) against the embedded store on a manual clock.
// The scenarios themselves are in Support/StaleEpochScenarios.swift; each test names, in its
// comment, the protection it pins: removing that protection makes the test fail.
import CallTestSupport
import Testing

@testable import Signaling

@Suite("Stale-epoch regressions (spec §7)")
struct StaleEpochTests {
    private func expectClean(_ outcome: ScenarioOutcome) {
        #expect(outcome.violations == [], "\(outcome)")
        #expect(outcome.converged, "\(outcome)")
    }

    /// Pins the stale-epoch filter: the inbox drops records below the floor (the active epoch,
    /// or the session record's epoch before the first offer).
    @Test func StaleEpoch01_oldEpochRecordsAtCallStartAreIgnored() async throws {
        expectClean(try await StaleEpochScenarios.s01OldEpochRecordsAtCallStart(.ours))
    }

    /// Pins the repeated-description guard: an offer of an epoch whose remote description is
    /// set (or that this device answered) is never applied again — no "stale offer after RD".
    @Test func StaleEpoch02_oldOfferAfterRemoteDescriptionDoesNotReset() async throws {
        expectClean(try await StaleEpochScenarios.s02OldOfferAfterRemoteDescription(.ours))
    }

    /// Pins the inbox's deduplication by (record name, change tag) across ingestion paths.
    @Test func StaleEpoch03_sameRecordByThreePathsIsAppliedOnce() async throws {
        let outcome = try await StaleEpochScenarios.s03SameRecordByThreePaths(.ours)
        expectClean(outcome)
        #expect(outcome.notes.first != "record versions arriving more than once: 0", "premise: \(outcome)")
    }

    /// Pins holding early candidates per epoch until that epoch's remote description is applied.
    @Test func StaleEpoch04_candidatesBeforeTheirDescriptionAreHeldThenApplied() async throws {
        expectClean(try await StaleEpochScenarios.s04CandidatesBeforeDescription(.ours))
    }

    /// Pins epoch glare resolution: the higher epoch wins; on a tie the offer creator's offer
    /// wins — it overwrites the colliding offer, and the polite peer rolls back and answers.
    @Test func StaleEpoch05_epochGlareHasOneWinnerAndConnects() async throws {
        expectClean(try await StaleEpochScenarios.s05EpochGlare(.ours))
    }

    /// Pins the merge of `serverRecordChanged` on `SignalSession` by the maximum epoch, with
    /// bounded retries.
    @Test func StaleEpoch06_concurrentSessionUpdatesLoseNoEpoch() async throws {
        expectClean(try await StaleEpochScenarios.s06ConcurrentSessionUpdates(.ours))
    }

    /// Pins garbage collection's guard: never a record of the active epoch (or a newer one),
    /// not even past the TTL.
    @Test func StaleEpoch07_garbageCollectionDuringRestartKeepsTheActiveEpoch() async throws {
        let outcome = try await StaleEpochScenarios.s07GarbageCollectionDuringRestart(.ours)
        expectClean(outcome)
        #expect(outcome.notes.first?.hasPrefix("records of the first epoch left after the TTL: 0;") == true,
                "GC must still collect the old epoch: \(outcome)")
    }

    /// Pins end-of-candidates: no chunk of an (epoch, owner) after its end-of-candidates chunk.
    @Test func StaleEpoch08_chunkAfterEndOfCandidatesIsIgnored() async throws {
        expectClean(try await StaleEpochScenarios.s08ChunkAfterEndOfCandidates(.ours))
    }

    /// Pins the ufrag check: a chunk whose ufrag is not the epoch's remote description's is
    /// dropped (and its seq consumed, so the next chunk still flows).
    @Test func StaleEpoch09_chunkWithMismatchedUfragIsIgnored() async throws {
        expectClean(try await StaleEpochScenarios.s09MismatchedUfrag(.ours))
    }

    /// Pins the epoch clock: `max(now_ms, last + 1)`, with `last` seeded from the session record.
    @Test func StaleEpoch10_epochsIncreaseAcrossBackwardClockSteps() async throws {
        expectClean(try await StaleEpochScenarios.s10ClockStepsBackwards(.ours))
    }

    /// Pins the stale-epoch filter under full scans of a zone full of old signals, and the
    /// counters that report what the scans cost.
    @Test func StaleEpoch11_fullScanOverThousandOldRecordsAppliesNothingStale() async throws {
        let outcome = try await StaleEpochScenarios.s11FullScanOverThousandOldRecords(.ours)
        expectClean(outcome)
        #expect(outcome.notes.first?.contains("stale drops 0") == false, "\(outcome)")
    }

    /// Pins the hybrid strategy's polls (fast while negotiating): the safety net for lost pushes.
    @Test func StaleEpoch12_hybridConvergesWhenEveryPushIsLost() async throws {
        let outcome = try await StaleEpochScenarios.s12PushLost(.ours)
        expectClean(outcome)
        #expect(outcome.notes.first?.hasPrefix("notifications received 0") == true, "premise: \(outcome)")
    }
}
