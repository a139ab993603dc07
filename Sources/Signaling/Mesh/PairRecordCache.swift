// The session records and envelopes of our own pairs, as the room's change feed last brought them
// (docs/PROTOCOL.md §11.3 "A leg's first reads"). A member reads the whole zone when it joins (its
// first fetch has no change token) and every change after it, so it already holds what a new leg
// would look up by name — the pair's `SignalSession` and the answer of its epoch (§5). The legs'
// first lookups are answered from here, without a round trip, while the view is whole: it is not
// when the first fetch began from a kept token, or when records were not kept for want of room.
// Only records of pairs that name us are kept, and only versions their owner wrote (a forged
// session record would set the pair's floor); a view as old as the last fetch is corrected by §5's
// conflict rules like any stale read.
import RecordStore

/// The latest session records and envelopes of our pairs the change feed brought.
struct PairRecordCache: Sendable {
    /// Records kept at most; beyond it the view is no longer whole and lookups go to the store.
    let capacity: Int
    /// Whether every record of our pairs since the first fetch is here.
    private(set) var isWhole = false
    private var records: [String: Record] = [:]

    init(capacity: Int = 2_048) {
        self.capacity = capacity
    }

    /// The first fetch starts: the view is whole when it reads the zone from the beginning.
    mutating func start(fromTheBeginning: Bool) {
        isWhole = fromTheBeginning
        records = [:]
    }

    /// Some of the feed was not kept: lookups go to the store from now on.
    mutating func lose() {
        isWhole = false
        records = [:]
    }

    /// Takes a fetched record of our pair `key`: a session record or an envelope its owner wrote.
    mutating func take(_ record: Record, writtenByOwner: Bool) {
        guard isWhole, writtenByOwner,
              record.recordType == SignalRecordType.session || record.recordType == SignalRecordType.envelope
        else { return }
        guard records[record.id.recordName] != nil || records.count < capacity else {
            lose()
            return
        }
        records[record.id.recordName] = record
    }

    /// Forgets records the change feed reported deleted.
    mutating func forget(_ ids: [RecordID]) {
        for id in ids { records[id.recordName] = nil }
    }

    /// The answer a lookup of `ids` would get from the store as of the last fetch (while `isWhole`).
    func lookup(_ ids: [RecordID]) -> [LookupResult] {
        ids.map { id in
            if let record = records[id.recordName] { return .found(record) }
            return .failed(id, StoreError(.unknownItem, "record \(id.recordName) is not in the fetched zone"))
        }
    }
}
