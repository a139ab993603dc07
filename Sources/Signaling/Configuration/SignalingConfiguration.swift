// A signaling configuration: which ingestion paths feed the inbox (spec §5), their timing, the
// negotiator's protections and garbage collection (spec §3). Selectable by name so the harness
// and the command line can compare configurations; `standard` (hybrid) is the default.

/// One ingestion path: a named change-sync machine feeding the inbox.
public struct IngestionPath: Hashable, Sendable {
    /// A name for reports ("push", "poll", …).
    public var name: String
    public var strategy: SyncStrategy
    /// When true the path polls only while a call is negotiating.
    public var pollsOnlyWhileNegotiating: Bool
    /// When true a push fetches the room's zone at once, not the database's changed zones first
    /// (`ChangeSync.pushFetchesZone`): ours; the reference design followed the database first.
    public var pushFetchesZone: Bool

    public init(name: String, strategy: SyncStrategy, pollsOnlyWhileNegotiating: Bool = false,
                pushFetchesZone: Bool = false) {
        self.name = name
        self.strategy = strategy
        self.pollsOnlyWhileNegotiating = pollsOnlyWhileNegotiating
        self.pushFetchesZone = pushFetchesZone
    }
}

/// Everything that decides how a peer signals.
public struct SignalingConfiguration: Hashable, Sendable {
    /// The configuration's name, as selected and reported.
    public var name: String
    /// The paths feeding the one inbox. Ours have one; none means records come only through
    /// `CallSignaling.Event.fetched` (tests that choose the order of arrival).
    public var ingestion: [IngestionPath]
    public var timing: SyncTiming
    /// Protections, garbage collection, codecs.
    public var negotiator: CallNegotiator.Configuration

    public init(name: String, ingestion: [IngestionPath], timing: SyncTiming = .default,
                negotiator: CallNegotiator.Configuration = CallNegotiator.Configuration()) {
        self.name = name
        self.ingestion = ingestion
        self.timing = timing
        self.negotiator = negotiator
    }

    /// Ours: one path with `strategy` (hybrid unless asked) whose pushes fetch the zone directly, every
    /// protection, GC on.
    public static func standard(_ strategy: SyncStrategy = .hybrid) -> SignalingConfiguration {
        SignalingConfiguration(name: strategy == .hybrid ? "standard" : strategy.rawValue,
                               ingestion: [IngestionPath(name: strategy.rawValue, strategy: strategy,
                                                         pushFetchesZone: true)])
    }

    /// The default: `standard`, hybrid sync.
    public static var `default`: SignalingConfiguration { standard() }

    /// The names `named(_:)` knows.
    public static var names: [String] { ["standard", "legacy"] + SyncStrategy.allCases.map(\.rawValue) }

    /// `standard`, `legacy`, or a strategy name (`push`, `poll-token`, `poll-fullscan`, `hybrid`)
    /// for ours with that strategy; nil for anything else.
    public static func named(_ name: String) -> SignalingConfiguration? {
        switch name {
        case "standard": return .standard()
        case "legacy": return .legacy
        default: return SyncStrategy(rawValue: name).map { .standard($0) }
        }
    }
}
