import Foundation
import RecordStore

// Record shares in records/modify (CloudKit Web Services Reference, "Types and Dictionaries" →
// Record Dictionary, Share Request Keys: `forRecord`, `publicPermission`, `participants`; the
// root's `share` and the hierarchy's `parent`; developer.apple.com/library/archive/…/
// CloudKitWebServicesReference/Types.html). A `cloudkit.share` record under any name but
// `cloudkit.zoneshare` shares the record `forRecord` names and its descendants. It is an ordinary
// operation of its request — mixed with others, atomic with them — whose record the engine plans
// as a share (StoreEngine+RecordShares.swift); it is answered, wherever a record is, with the
// share's keys (StoreAPI+Sharing.swift's `encodeShareRecord`).
extension StoreAPI {
    /// Whether a record dictionary of a request is a record share: of type `cloudkit.share`,
    /// under any name but the zone-wide share's.
    static func isRecordShareRecord(_ record: WireObject) -> Bool {
        (record["recordType"] as? String)?.lowercased() == shareRecordType
            && record["recordName"] as? String != ZoneShare.recordName
    }

    /// The record a share's operation saves — a record share, or the zone-wide share
    /// `cloudkit.zoneshare` — its system fields from the share's keys (only those sent, so an
    /// `update` changes what it names), with a fresh short GUID that the engine keeps only for a
    /// share that has none, and the share's own fields (`RecordShare.clientFields`, each of its
    /// type); also the fields sent as `null`, which an `update` clears.
    static func decodeShareRecord(_ record: WireObject, zone: ZoneID,
                                  kind: RecordOperation.Kind) throws -> (record: Record, cleared: [String]) {
        try record.allowing(.shareRecord)
        let zoneWide = isZoneShareRecord(record)
        if zoneWide {
            if record["forRecord"] != nil {
                throw WireFormat.ShapeError("\(record.name("forRecord")): \(ZoneShare.recordName) shares its whole "
                                            + "zone, no record; a record share has a name of its own")
            }
            if let type = try record.string("recordType"), type.lowercased() != shareRecordType {
                throw WireFormat.ShapeError("\(record.name("recordType")): \(ZoneShare.recordName) is of type "
                                            + "\(shareRecordType), not '\(type)'")
            }
        }
        let forDelete = kind == .delete || kind == .forceDelete
        guard let name = try record.string("recordName") ?? (kind == .create ? UUID().uuidString : nil) else {
            throw WireFormat.ShapeError("\(record.name("recordName")) is required")
        }
        let recordZone = try record["zoneID"].map { try WireFormat.decodeZoneID($0, context: record.name("zoneID")) }
            ?? zone
        var share = Record(recordType: RecordShare.recordType, id: RecordID(recordName: name, zoneID: recordZone),
                           recordChangeTag: try record.string("recordChangeTag"))
        guard !forDelete else { return (share, []) }
        var cleared: [String] = []
        if let fields = try record.object("fields") {
            for (key, value) in fields.object {
                guard let type = RecordShare.clientFields[key] else {
                    throw WireFormat.ShapeError("\(record.name("fields")).\(key): a share keeps only the fields "
                                                + RecordShare.clientFields.keys.sorted().joined(separator: ", "))
                }
                guard let v = try WireFormat.decodeField(value, name: "\(name).\(key)", zone: recordZone) else {
                    cleared.append(key)
                    continue
                }
                guard v.typeName == type else {
                    throw WireFormat.ShapeError("\(record.name("fields")).\(key): a \(type), not a \(v.typeName)")
                }
                share[key] = v
            }
        }
        if let root = try record.object("forRecord", what: #"{"recordName": …}"#) {
            share[RecordShare.Field.root] = .string(try root.requiredString("recordName"))
        } else if kind == .create && !zoneWide {
            throw WireFormat.ShapeError("\(record.name("forRecord")) is required to create a record share "
                                        + "(cloudkit.share): the record it shares")
        }
        let keys = try readShareKeys(record)
        var state = ZoneShare(zoneID: recordZone, publicPermission: keys.publicPermission ?? .none, changeTag: "",
                              shortGUID: ZoneShare.newShortGUID())
        for (user, permission) in keys.participants ?? [:] {
            state.participants[user] = ShareParticipant(userRecordName: user, permission: permission)
        }
        let fields = RecordShare.fields(of: state)
        share[RecordShare.Field.shortGUID] = fields[RecordShare.Field.shortGUID]
        if keys.publicPermission != nil || kind != .update && kind != .forceUpdate {
            share[RecordShare.Field.publicPermission] = fields[RecordShare.Field.publicPermission]
        }
        if keys.participants != nil || kind != .update && kind != .forceUpdate {
            share[RecordShare.Field.participants] = fields[RecordShare.Field.participants]
        }
        return (share, cleared.sorted())
    }

    /// The operation `kind` on `record` (an update clearing `removing`).
    static func operation(_ kind: RecordOperation.Kind, _ record: Record, removing: [String] = []) -> RecordOperation {
        switch kind {
        case .create: return .create(record)
        case .update: return .update(record, removing: removing)
        case .forceUpdate: return .forceUpdate(record, removing: removing)
        case .replace: return .replace(record)
        case .forceReplace: return .forceReplace(record)
        case .delete: return .delete(record.id, recordChangeTag: record.recordChangeTag)
        case .forceDelete: return .forceDelete(record.id)
        }
    }

    /// A record of a response that is a record share, answered with the share's keys (never its
    /// system fields); nil for any other record.
    static func encodeIfRecordShare(_ record: Record, _ rendering: RecordRendering) -> WireFormat.Object? {
        guard let share = RecordShare.share(in: record) ?? RecordShare.zoneShare(in: record) else { return nil }
        var o = encodeShareRecord(share, for: requestUser ?? "", rendering)
        if let c = record.created { o["created"] = WireFormat.encode(c) }
        if let m = record.modified { o["modified"] = WireFormat.encode(m) }
        return o
    }
}
