import Foundation
import RecordStore

/// What of a record a response shows: `desiredKeys` and `numbersAsStrings` of the requests that
/// return records (records/modify, records/lookup, records/query, changes/zone).
public struct RecordRendering: Sendable, Hashable {
    /// The fields to return; nil returns every field (CloudKit's default), an empty list none.
    public var desiredKeys: [String]?
    /// INT64, DOUBLE and TIMESTAMP values as strings.
    public var numbersAsStrings: Bool

    public init(desiredKeys: [String]? = nil, numbersAsStrings: Bool = false) {
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    /// Every field, numbers as numbers.
    public static let all = RecordRendering()
}

// Records on the wire: the Record Dictionary of CloudKit Web Services Reference, "Types and
// Dictionaries"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
// `recordName`, `recordType`, `recordChangeTag`, `fields`, `created`/`modified` (timestamp, user,
// device), `parent` and `share` (each `{"recordName"}`), and — an addition the reference's own
// examples show in responses — the record's `zoneID`.
extension WireFormat {
    /// A record as a response shows it.
    public static func encode(_ record: Record, _ rendering: RecordRendering = .all) -> Object {
        if record.recordType == RecordShare.recordType, let share = StoreAPI.encodeIfRecordShare(record, rendering) {
            return share
        }
        var fields = record.fields
        if let desired = rendering.desiredKeys {
            fields = RecordFields(record.fields.lazy.filter { desired.contains($0.key) }.map { ($0.key, $0.value) })
        }
        // Made for every key it may take: a literal of the first four grew (a new table) at the seventh.
        var o = Object(minimumCapacity: 10)
        o["recordName"] = record.id.recordName
        o["recordType"] = record.recordType
        o["zoneID"] = encode(record.id.zoneID)
        o["fields"] = encodeFields(fields, numbersAsStrings: rendering.numbersAsStrings)
        if let tag = record.recordChangeTag { o["recordChangeTag"] = tag }
        if let c = record.created { o["created"] = encode(c) }
        if let m = record.modified { o["modified"] = encode(m) }
        if let p = record.parent { o["parent"] = ["recordName": p] }
        if let s = record.share { o["share"] = ["recordName": s] }
        if let guid = record.shortGUID { o["shortGUID"] = guid }
        return o
    }

    /// A record as a client sends it to be saved: the request keys only.
    public static func encodeForSave(_ record: Record) -> Object {
        var o: Object = ["recordName": record.id.recordName, "zoneID": encode(record.id.zoneID),
                         "fields": encodeFields(record.fields)]
        if !record.recordType.isEmpty { o["recordType"] = record.recordType }
        if let tag = record.recordChangeTag { o["recordChangeTag"] = tag }
        if let p = record.parent { o["parent"] = ["recordName": p] }
        if record.shortGUID != nil { o["createShortGUID"] = true }
        return o
    }

    static func encode(_ stamp: RecordStamp) -> Object {
        var o: Object = ["timestamp": stamp.timestamp, "userRecordName": stamp.userRecordName]
        if let d = stamp.deviceID { o["deviceID"] = d }
        return o
    }

    /// A record from a response (what the server sent; keys this build does not know are skipped,
    /// as a client should).
    public static func decodeRecord(_ any: Any?, defaultZone: ZoneID) throws -> Record {
        guard let o = any as? Object else { throw ShapeError("a record must be an object") }
        guard let name = o["recordName"] as? String else { throw ShapeError("a record needs recordName") }
        guard let type = o["recordType"] as? String else { throw ShapeError("record \(name) needs recordType") }
        let zone = o["zoneID"] == nil ? defaultZone : try decodeZoneID(o["zoneID"])
        var pairs: [(String, FieldValue)] = []
        if let f = o["fields"] {
            guard let fo = f as? Object else { throw ShapeError("fields of \(name) must be an object") }
            pairs.reserveCapacity(fo.count)
            for (key, value) in fo {
                if let v = try decodeField(value, name: "\(name).\(key)", zone: zone, legacyLists: true) {
                    pairs.append((key, v))
                }
            }
        }
        func stamp(_ any: Any?) -> RecordStamp? {
            guard let s = any as? Object, let t = int64(s["timestamp"]), let u = s["userRecordName"] as? String else {
                return nil
            }
            return RecordStamp(timestamp: t, userRecordName: u, deviceID: s["deviceID"] as? String)
        }
        return Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: RecordFields(pairs),
                      recordChangeTag: o["recordChangeTag"] as? String, created: stamp(o["created"]),
                      modified: stamp(o["modified"]), parent: (o["parent"] as? Object)?["recordName"] as? String,
                      share: (o["share"] as? Object)?["recordName"] as? String, shortGUID: o["shortGUID"] as? String)
    }

    /// A record dictionary of a request, read strictly: its keys and their types (ModifyRecords →
    /// Record Operation Dictionary; Types → Record Dictionary, Common Record Keys and Request Keys).
    struct RequestRecord {
        var record: Record
        /// Fields sent as `null`: an update clears them.
        var cleared: [String]
    }

    /// Reads `record` of an operation; `zone` is the request's zone, `newName` names a record
    /// created without one ("If you don't provide a record name, CloudKit assigns one for you").
    static func decodeRequestRecord(_ record: WireObject, zone requestZone: ZoneID, forDelete: Bool,
                                    newName: () -> String?) throws -> RequestRecord {
        try record.allowing(.record)
        // A short GUID is made here, where randomness may be drawn, and kept by the engine only when
        // the record has none yet (Types → Record Dictionary, `createShortGUID`).
        let wantsShortGUID = try record.bool("createShortGUID") ?? false
        for key in ["forRecord", "publicPermission", "participants"] where record[key] != nil {
            throw ShapeError("\(record.name(key)) is a share's key: only a record of type cloudkit.share takes it")
        }
        guard let name = try record.string("recordName") ?? newName() else {
            throw ShapeError("\(record.name("recordName")) is required")
        }
        let zone = try record["zoneID"].map { try decodeZoneID($0, context: record.name("zoneID")) } ?? requestZone
        let type = try record.string("recordType") ?? ""
        if type.lowercased() == "cloudkit.share" {
            // Record shares are read by StoreAPI.decodeRecordShare; this is the zone-wide share's name.
            throw ShapeError("\(record.name("recordType")): cloudkit.share records are saved as shares")
        }
        var parent: String?
        if let p = try record.object("parent", what: #"{"recordName": …}"#) {
            try p.allowing(.parent)
            parent = try p.requiredString("recordName")
        }
        var pairs: [(String, FieldValue)] = []
        var cleared: [String] = []
        // A deletion names its record; whatever fields come with it are not read.
        if !forDelete, let fields = try record.object("fields") {
            pairs.reserveCapacity(fields.object.count)
            for (key, value) in fields.object {
                if let v = try decodeField(value, name: "\(name).\(key)", zone: zone) {
                    pairs.append((key, v))
                } else {
                    cleared.append(key)
                }
            }
        }
        let built = Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: RecordFields(pairs),
                           recordChangeTag: try record.string("recordChangeTag"), parent: parent,
                           shortGUID: wantsShortGUID && !forDelete ? ZoneShare.newShortGUID() : nil)
        return RequestRecord(record: built, cleared: cleared.sorted())
    }
}
