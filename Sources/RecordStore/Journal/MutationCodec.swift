import ZoneCore

/// Binary encoding of mutations and records for the journal and snapshots.
///
/// Varint lengths, tagged unions; every decoder checks bounds and throws, never traps.
enum MutationCodec {
    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    // MARK: Mutations

    static func encode(_ mutations: [Mutation], into w: inout ByteWriter) {
        w.writeVarint(UInt64(mutations.count))
        for m in mutations { encode(m, into: &w) }
    }

    static func decodeMutations(_ r: inout ByteReader) throws -> [Mutation] {
        let n = try r.readVarint()
        guard n <= UInt64(r.remaining) else { throw DecodeError(description: "mutation count \(n) exceeds entry") }
        var out: [Mutation] = []
        out.reserveCapacity(Int(n))
        for _ in 0..<n { out.append(try decodeMutation(&r)) }
        return out
    }

    static func encode(_ m: Mutation, into w: inout ByteWriter) {
        switch m {
        case let .createZone(id, incarnation, atMs):
            w.writeUInt8(1); encode(id, into: &w); w.writeVarint(incarnation); w.writeInt64(atMs)
        case let .deleteZone(id, purged):
            w.writeUInt8(2); encode(id, into: &w); w.writeUInt8(purged ? 1 : 0)
        case let .putRecord(record):
            w.writeUInt8(3); encode(record, into: &w)
        case let .deleteRecord(id, type, atMs):
            w.writeUInt8(4); encode(id, into: &w); w.writeString(type); w.writeInt64(atMs)
        case let .putShare(share):
            w.writeUInt8(5); encode(share, into: &w)
        case let .deleteShare(id):
            w.writeUInt8(6); encode(id, into: &w)
        case let .putSubscription(user, scope, sub):
            w.writeUInt8(7); w.writeString(user); encode(scope, into: &w); encode(sub, into: &w)
        case let .deleteSubscription(user, scope, id):
            w.writeUInt8(8); w.writeString(user); encode(scope, into: &w); w.writeString(id)
        case let .registerDevice(user, device):
            w.writeUInt8(9); w.writeString(user); w.writeString(device)
        }
    }

    static func decodeMutation(_ r: inout ByteReader) throws -> Mutation {
        let tag = try r.readUInt8()
        switch tag {
        case 1: return .createZone(try decodeZoneID(&r), incarnation: try r.readVarint(), atMs: try r.readInt64())
        case 2: return .deleteZone(try decodeZoneID(&r), purged: try r.readUInt8() != 0)
        case 3: return .putRecord(try decodeRecord(&r))
        case 4: return .deleteRecord(try decodeRecordID(&r), recordType: try r.readString(), atMs: try r.readInt64())
        case 5: return .putShare(try decodeShare(&r))
        case 6: return .deleteShare(try decodeZoneID(&r))
        case 7: return .putSubscription(user: try r.readString(), scope: try decodeScope(&r), try decodeSubscription(&r))
        case 8:
            return .deleteSubscription(user: try r.readString(), scope: try decodeScope(&r),
                                       subscriptionID: try r.readString())
        case 9: return .registerDevice(user: try r.readString(), deviceID: try r.readString())
        default: throw DecodeError(description: "unknown mutation tag \(tag) at offset \(r.offset - 1)")
        }
    }

    // MARK: Values

    static func encode(_ scope: DatabaseScope, into w: inout ByteWriter) {
        w.writeUInt8(scope == .private ? 0 : 1)
    }

    static func decodeScope(_ r: inout ByteReader) throws -> DatabaseScope {
        switch try r.readUInt8() {
        case 0: return .private
        case 1: return .shared
        case let v: throw DecodeError(description: "unknown database scope \(v)")
        }
    }

    static func encode(_ id: ZoneID, into w: inout ByteWriter) {
        w.writeString(id.zoneName); w.writeString(id.ownerName)
    }

    static func decodeZoneID(_ r: inout ByteReader) throws -> ZoneID {
        ZoneID(zoneName: try r.readString(), ownerName: try r.readString())
    }

    static func encode(_ id: RecordID, into w: inout ByteWriter) {
        w.writeString(id.recordName); encode(id.zoneID, into: &w)
    }

    static func decodeRecordID(_ r: inout ByteReader) throws -> RecordID {
        RecordID(recordName: try r.readString(), zoneID: try decodeZoneID(&r))
    }

    static func encode(_ s: RecordStamp?, into w: inout ByteWriter) {
        guard let s else { w.writeUInt8(0); return }
        w.writeUInt8(1); w.writeInt64(s.timestamp); w.writeString(s.userRecordName)
    }

    static func decodeStamp(_ r: inout ByteReader) throws -> RecordStamp? {
        guard try r.readUInt8() != 0 else { return nil }
        return RecordStamp(timestamp: try r.readInt64(), userRecordName: try r.readString())
    }

    static func encode(_ record: Record, into w: inout ByteWriter) {
        w.writeString(record.recordType)
        encode(record.id, into: &w)
        w.writeString(record.recordChangeTag ?? "")
        encode(record.created, into: &w)
        encode(record.modified, into: &w)
        w.writeVarint(UInt64(record.fields.count))
        // Names sorted, so a record's bytes never depend on the order its fields were set in.
        for field in record.fields.sorted(by: { $0.key < $1.key }) {
            w.writeString(field.key)
            encode(field.value, into: &w)
        }
    }

    static func decodeRecord(_ r: inout ByteReader) throws -> Record {
        let type = try r.readString()
        let id = try decodeRecordID(&r)
        let tag = try r.readString()
        let created = try decodeStamp(&r)
        let modified = try decodeStamp(&r)
        let n = try r.readVarint()
        guard n <= UInt64(r.remaining) else { throw DecodeError(description: "field count \(n) exceeds entry") }
        var pairs: [(String, FieldValue)] = []
        pairs.reserveCapacity(Int(n))
        for _ in 0..<n {
            let key = try r.readString()
            pairs.append((key, try decodeValue(&r, depth: 0)))
        }
        // A name written twice keeps its last value, as it did when this read into a dictionary.
        let fields = RecordFields(pairs)
        return Record(recordType: type, id: id, fields: fields, recordChangeTag: tag.isEmpty ? nil : tag,
                      created: created, modified: modified)
    }

    static func encode(_ v: FieldValue, into w: inout ByteWriter) {
        switch v {
        case .string(let s): w.writeUInt8(1); w.writeString(s)
        case .int64(let i): w.writeUInt8(2); w.writeInt64(i)
        case .double(let d): w.writeUInt8(3); w.writeDouble(d)
        case .timestamp(let t): w.writeUInt8(4); w.writeInt64(t)
        case .bytes(let b): w.writeUInt8(5); w.writeLengthPrefixedBytes(b)
        case .reference(let id): w.writeUInt8(6); encode(id, into: &w)
        case .list(let items):
            w.writeUInt8(7); w.writeVarint(UInt64(items.count))
            for item in items { encode(item, into: &w) }
        case .emptyList(let elementType): w.writeUInt8(8); w.writeString(elementType)
        }
    }

    static func decodeValue(_ r: inout ByteReader, depth: Int) throws -> FieldValue {
        let tag = try r.readUInt8()
        switch tag {
        case 1: return .string(try r.readString())
        case 2: return .int64(try r.readInt64())
        case 3: return .double(try r.readDouble())
        case 4: return .timestamp(try r.readInt64())
        case 5: return .bytes(try r.readLengthPrefixedBytes())
        case 6: return .reference(try decodeRecordID(&r))
        case 7:
            guard depth < 8 else { throw DecodeError(description: "lists nested too deeply") }
            let n = try r.readVarint()
            guard n <= UInt64(r.remaining) else { throw DecodeError(description: "list length \(n) exceeds entry") }
            var items: [FieldValue] = []
            for _ in 0..<n { items.append(try decodeValue(&r, depth: depth + 1)) }
            return .list(items)
        case 8: return .emptyList(elementType: try r.readString())
        default: throw DecodeError(description: "unknown field type tag \(tag) at offset \(r.offset - 1)")
        }
    }

    static func encode(_ p: SharePermission, into w: inout ByteWriter) {
        w.writeUInt8(p == .none ? 0 : p == .readOnly ? 1 : 2)
    }

    static func decodePermission(_ r: inout ByteReader) throws -> SharePermission {
        switch try r.readUInt8() {
        case 0: return .none
        case 1: return .readOnly
        case 2: return .readWrite
        case let v: throw DecodeError(description: "unknown share permission \(v)")
        }
    }

    static func encode(_ share: ZoneShare, into w: inout ByteWriter) {
        encode(share.zoneID, into: &w)
        encode(share.publicPermission, into: &w)
        w.writeString(share.changeTag)
        w.writeVarint(UInt64(share.participants.count))
        for user in share.participants.keys.sorted() {
            let p = share.participants[user]!
            w.writeString(user); encode(p.permission, into: &w); w.writeUInt8(p.status == .accepted ? 1 : 0)
        }
    }

    static func decodeShare(_ r: inout ByteReader) throws -> ZoneShare {
        let zone = try decodeZoneID(&r)
        let pub = try decodePermission(&r)
        let tag = try r.readString()
        let n = try r.readVarint()
        guard n <= UInt64(r.remaining) else { throw DecodeError(description: "participant count exceeds entry") }
        var participants: [String: ShareParticipant] = [:]
        for _ in 0..<n {
            let user = try r.readString()
            let permission = try decodePermission(&r)
            let status: ParticipantStatus = try r.readUInt8() == 1 ? .accepted : .invited
            participants[user] = ShareParticipant(userRecordName: user, permission: permission, status: status)
        }
        return ZoneShare(zoneID: zone, publicPermission: pub, participants: participants, changeTag: tag)
    }

    static func encode(_ sub: Subscription, into w: inout ByteWriter) {
        w.writeString(sub.subscriptionID)
        switch sub.kind {
        case .database: w.writeUInt8(0)
        case .zone(let z): w.writeUInt8(1); encode(z, into: &w)
        case .query(let type, let z):
            w.writeUInt8(2); w.writeString(type)
            if let z { w.writeUInt8(1); encode(z, into: &w) } else { w.writeUInt8(0) }
        }
    }

    static func decodeSubscription(_ r: inout ByteReader) throws -> Subscription {
        let id = try r.readString()
        switch try r.readUInt8() {
        case 0: return Subscription(subscriptionID: id, kind: .database)
        case 1: return Subscription(subscriptionID: id, kind: .zone(try decodeZoneID(&r)))
        case 2:
            let type = try r.readString()
            let zone = try r.readUInt8() == 1 ? try decodeZoneID(&r) : nil
            return Subscription(subscriptionID: id, kind: .query(recordType: type, zoneID: zone))
        case let v: throw DecodeError(description: "unknown subscription kind \(v)")
        }
    }
}
