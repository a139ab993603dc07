// The protections of spec §3–5, each a switch so that the `legacy` configuration can turn them
// off and the harness can measure what each one is worth. Every one is on by default.

/// Which of the stale-epoch protections are on.
public struct SignalingProtections: Hashable, Sendable {
    /// Inbox: drop a record version already seen, by (record name, change tag) (spec §5).
    public var deduplicate = true
    /// Inbox and negotiator: drop records of epochs below the active one (spec §3, "stale records").
    public var dropStaleEpochs = true
    /// Inbox: hold candidates until their epoch's remote description is applied (spec §4).
    public var holdEarlyCandidates = true
    /// Inbox: hand chunks over once, in `seq` order per (epoch, owner), none after
    /// end-of-candidates (spec §4).
    public var orderChunks = true
    /// Inbox: drop chunks whose `ufrag` does not match the epoch's remote description (spec §4).
    public var checkUfrag = true
    /// Negotiator: never apply a second offer (or answer) for an epoch whose remote description
    /// is already set or that this device answered — the "stale offer after RD" reset (concern A).
    public var ignoreRepeatedDescriptions = true
    /// Saves are conditional (`create`, `replace` with the change tag) and resolve
    /// `serverRecordChanged`: the session by the maximum epoch, colliding offers by the epoch-glare
    /// rule (spec §3). Off: `forceReplace`, the last writer wins.
    public var resolveConflicts = true

    public init() {}

    /// Every protection on: the default.
    public static let all = SignalingProtections()

    /// Every protection off: what the reference design did (seed 001).
    public static var none: SignalingProtections {
        var p = SignalingProtections()
        p.deduplicate = false
        p.dropStaleEpochs = false
        p.holdEarlyCandidates = false
        p.orderChunks = false
        p.checkUfrag = false
        p.ignoreRepeatedDescriptions = false
        p.resolveConflicts = false
        return p
    }
}
