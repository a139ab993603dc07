/// A record share as the store keeps it: a record of type `cloudkit.share` in the shared record's
/// zone, whose system fields hold the share's state (CloudKit Web Services Reference, "Types and
/// Dictionaries" → Record Dictionary, Share Request Keys; the CloudKit framework's `CKShare` made
/// for a root record). Being a record, it is journalled, snapshotted, replicated through
/// PostgreSQL, and shows in `changes/zone` and `records/query` like any record, in every backend
/// and format that already holds records. The root record's `share` names it.
///
/// The fields are the server's: a save through the JSON API never takes them from a client (the
/// API builds them from `publicPermission`, `participants` and `forRecord`), and they are
/// answered as the share's keys, never as fields.
public enum RecordShare {
    /// The record type of every share record.
    public static let recordType = "cloudkit.share"

    /// The system fields (a client's `cloudkit.*` fields on a share are refused by the API).
    public enum Field {
        public static let root = "cloudkit.rootRecord"
        public static let publicPermission = "cloudkit.publicPermission"
        /// A `STRING_LIST`, one participant an item: `permission status user`.
        public static let participants = "cloudkit.participants"
        public static let shortGUID = "cloudkit.shortGUID"
    }

    /// The fields a client may save on a share, with the type each takes: the CloudKit framework's
    /// `CKShare.SystemFieldKey` — `title` and `shareType` (a UTI) as strings, `thumbnailImageData`
    /// as bytes. They are the share's (`ZoneShare.fields`), answered in its `fields`.
    public static let clientFields: [String: String] = [
        "cloudkit.title": "STRING", "cloudkit.thumbnailImageData": "BYTES", "cloudkit.type": "STRING",
    ]

    /// Whether `record` is a record share (a share record that is not the zone-wide one).
    public static func isRecordShare(_ record: Record) -> Bool {
        record.recordType == recordType && record.id.recordName != ZoneShare.recordName
    }

    /// The share `record` holds, or nil when it is no record share or its fields are damaged.
    public static func share(in record: Record) -> ZoneShare? {
        guard isRecordShare(record), case .string(let root)? = record[Field.root] else { return nil }
        var share = parse(record)
        share.shareRecordName = record.id.recordName
        share.rootRecordName = root
        return share
    }

    /// The zone-wide share a `cloudkit.zoneshare` record stands for: the answer to its save, or
    /// the share a save sends (then only the keys sent are set: `sentKeys`). Nil for any other
    /// record.
    public static func zoneShare(in record: Record) -> ZoneShare? {
        guard record.id.recordName == ZoneShare.recordName,
              record.recordType == recordType || record.recordType.isEmpty else { return nil }
        return parse(record)
    }

    /// The record a zone-wide share is answered as (`recordName` `cloudkit.zoneshare`).
    public static func record(of share: ZoneShare) -> Record {
        Record(recordType: recordType, id: RecordID(recordName: ZoneShare.recordName, zoneID: share.zoneID),
               fields: fields(of: share), recordChangeTag: share.changeTag)
    }

    /// Which of a share's keys a save's record sends: an `update` changes only those.
    public static func sentKeys(in record: Record) -> (publicPermission: Bool, participants: Bool) {
        (record[Field.publicPermission] != nil, record[Field.participants] != nil)
    }

    private static func parse(_ record: Record) -> ZoneShare {
        var share = ZoneShare(zoneID: record.id.zoneID, changeTag: record.recordChangeTag ?? "")
        if case .string(let text)? = record[Field.publicPermission] {
            share.publicPermission = SharePermission(rawValue: text) ?? .none
        }
        if case .string(let guid)? = record[Field.shortGUID] { share.shortGUID = guid }
        for name in clientFields.keys { if let value = record[name] { share.fields[name] = value } }
        if case .list(let items)? = record[Field.participants] {
            for case .string(let item) in items {
                let parts = item.split(separator: " ", maxSplits: 2).map(String.init)
                guard parts.count == 3, let permission = SharePermission(rawValue: parts[0]),
                      let status = ParticipantStatus(rawValue: parts[1]) else { continue }
                share.participants[parts[2]] = ShareParticipant(userRecordName: parts[2], permission: permission,
                                                                status: status)
            }
        }
        return share
    }

    /// The system fields of `share` (its root, permission, participants in name order, short GUID).
    public static func fields(of share: ZoneShare) -> RecordFields {
        var fields: RecordFields = [:]
        if let root = share.rootRecordName { fields[Field.root] = .string(root) }
        fields[Field.publicPermission] = .string(share.publicPermission.rawValue)
        let items = share.participants.keys.sorted().map { user -> FieldValue in
            let p = share.participants[user]!
            return .string("\(p.permission.rawValue) \(p.status.rawValue) \(user)")
        }
        fields[Field.participants] = items.isEmpty ? .emptyList(elementType: "STRING") : .list(items)
        if let guid = share.shortGUID { fields[Field.shortGUID] = .string(guid) }
        for (name, value) in share.fields { fields[name] = value }
        return fields
    }
}
