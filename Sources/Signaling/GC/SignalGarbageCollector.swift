// Garbage collection of signal records, spec §3 (concern B of seed 001: past epochs' signals
// stayed in the zone for ever, so every full scan picked them up again).
//
// - Once an epoch is connected, each peer deletes its own records of older epochs.
// - Records older than the TTL (default 10 minutes) are deleted whoever wrote them (a peer that
//   went away never cleans up after itself).
// - Never a record of the active epoch (or a newer one), never the `SignalSession` record, and
//   never in the call's way: deletions are requests of their own that nothing waits for.
import RecordStore
import ZoneCore

/// When and what garbage collection deletes.
public struct GarbageCollectionPolicy: Hashable, Sendable {
    /// Records older than this are deleted regardless of epoch connection (spec §3: 10 minutes).
    public var ttl: Duration = .seconds(600)
    /// How often to sweep while a call runs (besides right after an epoch connects).
    public var interval: Duration = .seconds(60)
    /// Deletions per request (CloudKit Web Services, Data Size Limits: at most 200 operations).
    public var maxDeletesPerRequest = 200

    public init() {}

    /// A 10-minute TTL, a sweep a minute.
    public static let `default` = GarbageCollectionPolicy()
}

/// Keeps a catalogue of the session's envelopes and chunks and decides which to delete.
public struct SignalGarbageCollector: Sendable {
    /// What garbage collection did.
    public struct Counters: Hashable, Sendable, Codable {
        /// Sweeps run.
        public var sweeps = 0
        /// Records deleted.
        public var deletions = 0
        /// Deletions answered `unknownItem` (someone else deleted the record first).
        public var alreadyGone = 0
        /// Deletions that failed otherwise (tried again at the next sweep).
        public var failures = 0

        public init() {}
    }

    public let myUserID: String
    public let policy: GarbageCollectionPolicy
    public private(set) var counters = Counters()
    /// Envelopes and chunks known to exist, by record name.
    /// Room for a call's records from the start: grown from empty, it was rehashed four times in
    /// every call's first seconds (sweeps sort what they take, so the order does not matter).
    private var catalogue = [String: SignalRecordSummary](minimumCapacity: 32)
    /// Names whose deletion is in flight.
    private var deleting: Set<String> = []
    private var nextSweep: Instant?

    public init(myUserID: String, policy: GarbageCollectionPolicy = .default) {
        self.myUserID = myUserID
        self.policy = policy
    }

    /// When the next sweep is due.
    public var nextDeadline: Instant? { nextSweep }

    /// How many records the catalogue holds.
    public var knownRecords: Int { catalogue.count }

    /// The records known to exist and not being deleted (a room hands them on when a leg ends).
    public var remainingRecords: [RecordID] {
        catalogue.keys.filter { !deleting.contains($0) }.sorted().compactMap { catalogue[$0]?.id }
    }

    /// Starts the periodic sweeps.
    public mutating func start(now: Instant) {
        if nextSweep == nil { nextSweep = now + policy.interval }
    }

    /// Notes records that exist (fetched, or saved by us).
    public mutating func observe(_ summaries: [SignalRecordSummary]) {
        // By index: each record is read from the array and entered into the catalogue once.
        for i in summaries.indices { catalogue[summaries[i].id.recordName] = summaries[i] }
    }

    /// Notes one record that exists (one of our saves: no array is made for it).
    public mutating func observe(_ summary: SignalRecordSummary) {
        catalogue[summary.id.recordName] = summary
    }

    /// Forgets records the change feed reported deleted.
    public mutating func forget(_ ids: [RecordID]) {
        for id in ids { catalogue[id.recordName] = nil }
    }

    /// An epoch connected: sweep now.
    public mutating func epochConnected(now: Instant) {
        nextSweep = now
    }

    /// If a sweep is due, the records to delete now, in requests of at most
    /// `maxDeletesPerRequest`.
    public mutating func sweep(now: Instant, activeEpoch: CallEpoch?, connectedEpoch: CallEpoch?) -> [[RecordID]] {
        guard let due = nextSweep, due <= now else { return [] }
        nextSweep = now + policy.interval
        counters.sweeps += 1
        let nowMs = now.millisecondsSinceEpoch
        let ttlMs = policy.ttl.nanoseconds / 1_000_000
        var doomed: [RecordID] = []
        for i in catalogue.indices where !deleting.contains(catalogue.keys[i]) {
            let record = catalogue.values[i]
            // Never the active epoch, nor one newer (a remote restart not adopted yet).
            if let activeEpoch, record.callEpoch >= activeEpoch { continue }
            let ownOlderThanConnected = record.ownerUserID == myUserID
                && connectedEpoch.map { record.callEpoch < $0 } == true
            let expired = record.modifiedMs.map { nowMs - $0 > ttlMs } == true
            if ownOlderThanConnected || expired { doomed.append(record.id) }
        }
        doomed.sort { $0.recordName < $1.recordName }
        for id in doomed { deleting.insert(id.recordName) }
        return stride(from: 0, to: doomed.count, by: policy.maxDeletesPerRequest).map {
            Array(doomed[$0..<min($0 + policy.maxDeletesPerRequest, doomed.count)])
        }
    }

    /// The call is over (hang-up): every record of ours it knows of, of every epoch, goes — the
    /// peer's goodbye through the store. The remote's records are its own to collect.
    public mutating func farewell() -> [[RecordID]] {
        var doomed: [RecordID] = []
        for (name, record) in catalogue where !deleting.contains(name) && record.ownerUserID == myUserID {
            doomed.append(record.id)
        }
        guard !doomed.isEmpty else { return [] }
        counters.sweeps += 1
        nextSweep = nil
        doomed.sort { $0.recordName < $1.recordName }
        for id in doomed { deleting.insert(id.recordName) }
        return stride(from: 0, to: doomed.count, by: policy.maxDeletesPerRequest).map {
            Array(doomed[$0..<min($0 + policy.maxDeletesPerRequest, doomed.count)])
        }
    }

    /// Whether a deletion of `name` is in flight (its result belongs to the collector).
    public func isDeleting(_ name: String) -> Bool { deleting.contains(name) }

    /// The store deleted `id`.
    public mutating func deleted(_ id: RecordID) {
        deleting.remove(id.recordName)
        catalogue[id.recordName] = nil
        counters.deletions += 1
    }

    /// Deleting `id` failed with `error`.
    public mutating func deleteFailed(_ id: RecordID, _ error: StoreError) {
        deleting.remove(id.recordName)
        if error.code == .unknownItem {
            catalogue[id.recordName] = nil
            counters.alreadyGone += 1
        } else {
            counters.failures += 1
        }
    }
}
