// When to fetch, spec §5: push, token poll, full-scan poll, hybrid. Every strategy feeds the one
// inbox; they differ only in when they ask the store and what they ask.

/// How a peer learns about changes to its room's zone.
public enum SyncStrategy: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A database-subscription notification triggers fetch-database-changes, then
    /// fetch-zone-changes, both with the stored change tokens. Nothing else.
    case push
    /// Fetch zone changes with the stored token every `pollInterval`.
    case pollToken = "poll-token"
    /// Fetch the whole zone (`since: nil`) every `pollInterval`: the reference design's signal
    /// poll (seed 001, concern B), kept to measure it.
    case pollFullScan = "poll-fullscan"
    /// Push, plus a token poll every `safetyPollInterval` for lost pushes, plus a token poll
    /// every `pollInterval` while a call is negotiating.
    case hybrid

    /// Whether notifications trigger fetches.
    public var usesPush: Bool { self == .push || self == .hybrid }

    public var description: String { rawValue }
}

/// The intervals and limits of change sync.
public struct SyncTiming: Hashable, Sendable {
    /// The poll interval of `poll-token` and `poll-fullscan`, and of `hybrid` while negotiating:
    /// 2 s, as the reference design polled.
    public var pollInterval: Duration = .seconds(2)
    /// The safety-net token poll of `hybrid` when no call is negotiating.
    public var safetyPollInterval: Duration = .seconds(30)
    /// `resultsLimit` of each change-feed request (nil: the server's page size).
    public var resultsLimit: Int?
    /// The first wait after `zoneBusy` (or an error without `retryAfter`); doubled each time.
    public var backoffBase: Duration = .seconds(1)
    /// The longest backoff wait.
    public var backoffCap: Duration = .seconds(60)

    public init() {}

    /// 2-second polls, 30-second safety poll, 1 s → 60 s backoff.
    public static let `default` = SyncTiming()
}
