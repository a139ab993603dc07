/// Where each short GUID leads: a zone-wide share, a record share or a record saved with
/// `createShortGUID` (records/resolve, "Fetching Record Information"). Kept by `StoreState.apply`
/// with the records and shares it changes, and rebuilt from the zones when a snapshot is loaded, so
/// a resolve is one lookup whatever the number of zones. Every backend holds its state in memory
/// (the PostgreSQL backend as a replica of the log), so this one index serves them all.
struct ShortGUIDIndex: Sendable {
    /// What a short GUID names.
    enum Target: Hashable, Sendable {
        /// The zone-wide share of a zone.
        case zoneShare(ZoneID)
        /// A record: a record share, or a record with a short GUID of its own.
        case record(RecordID)
    }

    private var targets: [String: Target] = [:]
    /// How many records hold a short GUID of their own (`Record.shortGUID`), which only record
    /// format 3 and snapshot 5 can hold.
    private(set) var recordsWithOwnGUID = 0

    /// Whether a record holds a short GUID of its own.
    var holdsRecords: Bool { recordsWithOwnGUID > 0 }

    subscript(guid: String) -> Target? { guid.isEmpty ? nil : targets[guid] }

    /// The short GUID `record` is found by: its own, or a record share's.
    static func guid(of record: Record) -> String? {
        if let own = record.shortGUID { return own }
        guard RecordShare.isRecordShare(record), case .string(let guid)? = record[RecordShare.Field.shortGUID] else {
            return nil
        }
        return guid
    }

    /// Whether saving or deleting `record` may change the index (a cheap test for the common record).
    static func mayMatter(_ record: Record?) -> Bool {
        guard let record else { return false }
        return record.shortGUID != nil || record.recordType == RecordShare.recordType
    }

    /// The record `old` is now `new` (either nil: created, deleted).
    mutating func noteRecord(old: Record?, new: Record?) {
        if let old {
            if old.shortGUID != nil { recordsWithOwnGUID -= 1 }
            if let guid = Self.guid(of: old) { remove(guid, .record(old.id)) }
        }
        if let new {
            if new.shortGUID != nil { recordsWithOwnGUID += 1 }
            if let guid = Self.guid(of: new) { targets[guid] = .record(new.id) }
        }
    }

    /// The zone-wide share of `zone` was `old` and is now `new`.
    mutating func noteZoneShare(_ zone: ZoneID, old: ZoneShare?, new: ZoneShare?) {
        if let guid = old?.shortGUID { remove(guid, .zoneShare(zone)) }
        if let guid = new?.shortGUID { targets[guid] = .zoneShare(zone) }
    }

    /// `zone` is gone with its records and share.
    mutating func removeZone(_ zone: ZoneState) {
        noteZoneShare(zone.id, old: zone.share, new: nil)
        guard !targets.isEmpty else { return }
        for record in zone.records.values where Self.mayMatter(record) { noteRecord(old: record, new: nil) }
    }

    /// The index of `zones`, made anew (a snapshot loaded).
    mutating func rebuild(from zones: [ZoneID: ZoneState]) {
        self = ShortGUIDIndex()
        for zone in zones.values {
            noteZoneShare(zone.id, old: nil, new: zone.share)
            for record in zone.records.values where Self.mayMatter(record) { noteRecord(old: nil, new: record) }
        }
    }

    /// Forgets `guid` if it still leads to `target` (a GUID made twice, 130 random bits apart from
    /// never, stays with whoever holds it last).
    private mutating func remove(_ guid: String, _ target: Target) {
        if targets[guid] == target { targets[guid] = nil }
    }
}
