// The reference design as it was (seed 001), kept to be measured against ours — never the
// default. It runs the same machines with the protections switched off:
//
// - concern A: three ingestion paths feed the controller, each delivering every record it
//   fetched — the push/delta path (CKSyncEngine), the message sync pipeline, and the signal
//   poll — with no deduplication across them;
// - concern B: the signal poll scans the whole zone (`since: nil`) every 2 seconds from call
//   start until connected, and nothing ever deletes old signals;
// - no epoch filtering: offers, answers and candidates of any epoch are applied, so an old
//   offer arriving after the remote description is set resets the call ("stale offer after RD");
// - candidates are applied as they come (no hold, no order, no ufrag check);
// - records are saved last-writer-wins, so concurrent updates of `SignalSession` lose epochs.
//
// Its counters (`resets`, `duplicateApplies`, `staleDrops` = 0, `recordsFetched`, `bytes`)
// are what the harness compares.

extension SignalingConfiguration {
    /// The reference design's behaviour, selectable as `legacy`.
    public static var legacy: SignalingConfiguration {
        var negotiator = CallNegotiator.Configuration()
        negotiator.protections = .none
        negotiator.garbageCollection = nil
        return SignalingConfiguration(
            name: "legacy",
            ingestion: [
                IngestionPath(name: "push-delta", strategy: .push),
                IngestionPath(name: "sync-pipeline", strategy: .push),
                IngestionPath(name: "signal-poll", strategy: .pollFullScan, pollsOnlyWhileNegotiating: true),
            ],
            negotiator: negotiator)
    }
}
