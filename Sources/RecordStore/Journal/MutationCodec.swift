import ZoneCore

/// Binary encoding of mutations and records for the journal and snapshots.
///
/// Varint lengths, tagged unions; every decoder checks bounds and throws, never traps.
///
/// Versions. A record is written in record format 2 (`putRecord` tag 10, followed by the format's
/// number): stamps with their device, the record's `parent` and `share`, and the value tags 9–11
/// (references with their action, locations, assets). Record format 1 (`putRecord` tag 3, value
/// tags 1–8), which builds before format 2 wrote, is still read: a journal or snapshot written by
/// them loads as it did. A new format gets a new number after tag 10; the decoder refuses a number
/// it does not know, naming it. A deletion in a zone holding record shares is written as tag 16: tag
/// 4 followed by the shared roots whose hierarchy held the record (`Tombstone.sharedRoots`); other
/// deletions stay tag 4, so a store without record shares stays readable by earlier builds.
/// Record format 3 is format 2 followed by the record's optional short GUID (`Record.shortGUID`); a
/// record is written in it only when it has one, so a store without such records stays readable by
/// earlier builds, and one with them is refused by them ("upgrade zonertc") rather than misread.
/// A zone-wide share with fields of its own (`ZoneShare.fields`: title, thumbnail, type) is written as
/// tag 17: tag 11 followed by the fields as a record's; a share without them stays tag 11.
enum MutationCodec {
    /// The record format this build writes for a record without a short GUID.
    static let recordFormat: UInt8 = 2
    /// The record format this build writes for a record with a short GUID.
    static let recordFormatWithShortGUID: UInt8 = 3
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
            let format = record.shortGUID == nil ? recordFormat : recordFormatWithShortGUID
            w.writeUInt8(10); w.writeUInt8(format); encode(record, format: format, into: &w)
        case let .deleteRecord(id, type, atMs, nil):
            w.writeUInt8(4); encode(id, into: &w); w.writeString(type); w.writeInt64(atMs)
        case let .deleteRecord(id, type, atMs, roots?):
            w.writeUInt8(16); encode(id, into: &w); w.writeString(type); w.writeInt64(atMs)
            encode(roots, into: &w)
        case let .putShare(share):
            w.writeUInt8(share.fields.isEmpty ? 11 : 17); encode(share, into: &w)
        case let .deleteShare(id):
            w.writeUInt8(6); encode(id, into: &w)
        case let .putSubscription(user, scope, sub):
            w.writeUInt8(7); w.writeString(user); encode(scope, into: &w); encode(sub, into: &w)
        case let .deleteSubscription(user, scope, id):
            w.writeUInt8(8); w.writeString(user); encode(scope, into: &w); w.writeString(id)
        case let .registerDevice(user, device):
            w.writeUInt8(9); w.writeString(user); w.writeString(device)
        case let .putWebToken(token):
            w.writeUInt8(14); encode(token, into: &w)
        case let .deleteWebToken(digest):
            w.writeUInt8(15); w.writeString(digest)
        }
    }

    static func decodeMutation(_ r: inout ByteReader) throws -> Mutation {
        let tag = try r.readUInt8()
        switch tag {
        case 1: return .createZone(try decodeZoneID(&r), incarnation: try r.readVarint(), atMs: try r.readInt64())
        case 2: return .deleteZone(try decodeZoneID(&r), purged: try r.readUInt8() != 0)
        case 3: return .putRecord(try decodeRecord(&r, format: 1))
        case 10: return .putRecord(try decodeRecord(&r, format: try readRecordFormat(&r)))
        case 4: return .deleteRecord(try decodeRecordID(&r), recordType: try r.readString(), atMs: try r.readInt64())
        case 16:
            return .deleteRecord(try decodeRecordID(&r), recordType: try r.readString(), atMs: try r.readInt64(),
                                 sharedRoots: try decodeNames(&r))
        case 5: return .putShare(try decodeShare(&r, withShortGUID: false))
        case 11: return .putShare(try decodeShare(&r, withShortGUID: true))
        case 17: return .putShare(try decodeShare(&r, withShortGUID: true, withFields: true))
        case 6: return .deleteShare(try decodeZoneID(&r))
        case 7: return .putSubscription(user: try r.readString(), scope: try decodeScope(&r), try decodeSubscription(&r))
        case 8:
            return .deleteSubscription(user: try r.readString(), scope: try decodeScope(&r),
                                       subscriptionID: try r.readString())
        case 9: return .registerDevice(user: try r.readString(), deviceID: try r.readString())
        case 14: return .putWebToken(try decodeWebToken(&r))
        case 15: return .deleteWebToken(digest: try r.readString())
        default:
            throw DecodeError(description: "unknown mutation tag \(tag) at offset \(r.offset - 1) (written by a newer "
                              + "build?): upgrade zonertc")
        }
    }

    /// A web push token (tag 14; snapshot 3's token section): digest, user, environment, container,
    /// serial, registered.
    static func encode(_ token: WebPushToken, into w: inout ByteWriter) {
        w.writeString(token.digest); w.writeString(token.user); w.writeString(token.environment)
        w.writeString(token.container); w.writeVarint(token.serial); w.writeUInt8(token.registered ? 1 : 0)
    }

    static func decodeWebToken(_ r: inout ByteReader) throws -> WebPushToken {
        let digest = try r.readString(), user = try r.readString(), environment = try r.readString()
        let container = try r.readString(), serial = try r.readVarint()
        let registered: Bool
        switch try r.readUInt8() {
        case 0: registered = false
        case 1: registered = true
        case let v: throw DecodeError(description: "web token registered flag \(v)")
        }
        return WebPushToken(digest: digest, user: user, environment: environment, container: container,
                            serial: serial, registered: registered)
    }

    /// Record names (a deletion's shared roots, tag 16; snapshot 4's tombstones): a count, then each.
    static func encode(_ names: [String], into w: inout ByteWriter) {
        w.writeVarint(UInt64(names.count))
        for name in names { w.writeString(name) }
    }

    static func decodeNames(_ r: inout ByteReader) throws -> [String] {
        let n = try r.readVarint()
        guard n <= UInt64(r.remaining) else { throw DecodeError(description: "name count \(n) exceeds entry") }
        var names: [String] = []
        names.reserveCapacity(Int(n))
        for _ in 0..<n { names.append(try r.readString()) }
        return names
    }

    /// Whether any of `mutations` is a deletion with its shared roots (tag 16), which builds before
    /// tombstones kept them cannot read.
    static func holdsSharedRoots(_ mutations: [Mutation]) -> Bool {
        mutations.contains {
            if case .deleteRecord(_, _, _, .some) = $0 { return true }
            return false
        }
    }

    /// Whether any of `mutations` saves a zone-wide share with fields (tag 17), which builds before
    /// shares kept fields cannot read.
    static func holdsShareFields(_ mutations: [Mutation]) -> Bool {
        mutations.contains {
            if case .putShare(let share) = $0 { return !share.fields.isEmpty }
            return false
        }
    }

    /// Whether any of `mutations` saves a record with a short GUID (record format 3), which builds
    /// before plain records had short GUIDs cannot read.
    static func holdsShortGUIDs(_ mutations: [Mutation]) -> Bool {
        mutations.contains {
            if case .putRecord(let record) = $0 { return record.shortGUID != nil }
            return false
        }
    }

    /// Whether any of `mutations` is one that builds before web tokens were kept cannot read.
    static func holdsWebTokens(_ mutations: [Mutation]) -> Bool {
        mutations.contains {
            switch $0 {
            case .putWebToken, .deleteWebToken: true
            default: false
            }
        }
    }

    // MARK: Values

    static func encode(_ scope: DatabaseScope, into w: inout ByteWriter) {
        switch scope {
        case .private: w.writeUInt8(0)
        case .shared: w.writeUInt8(1)
        case .public: w.writeUInt8(2)
        }
    }

    static func decodeScope(_ r: inout ByteReader) throws -> DatabaseScope {
        switch try r.readUInt8() {
        case 0: return .private
        case 1: return .shared
        case 2: return .public
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

    /// A record format number this build reads.
    static func readRecordFormat(_ r: inout ByteReader) throws -> UInt8 {
        let format = try r.readUInt8()
        guard format == 2 || format == 3 else {
            throw DecodeError(description: "record format \(format) at offset \(r.offset - 1) "
                              + "(this build reads 1 to 3): upgrade zonertc")
        }
        return format
    }

    static func encode(_ s: RecordStamp?, into w: inout ByteWriter) {
        guard let s else { w.writeUInt8(0); return }
        w.writeUInt8(1); w.writeInt64(s.timestamp); w.writeString(s.userRecordName)
        encode(optional: s.deviceID, into: &w)
    }

    static func decodeStamp(_ r: inout ByteReader, format: UInt8) throws -> RecordStamp? {
        guard try r.readUInt8() != 0 else { return nil }
        let stamp = RecordStamp(timestamp: try r.readInt64(), userRecordName: try r.readString())
        guard format >= 2 else { return stamp }
        return RecordStamp(timestamp: stamp.timestamp, userRecordName: stamp.userRecordName,
                           deviceID: try decodeOptionalString(&r))
    }

    static func encode(optional s: String?, into w: inout ByteWriter) {
        guard let s else { w.writeUInt8(0); return }
        w.writeUInt8(1); w.writeString(s)
    }

    static func decodeOptionalString(_ r: inout ByteReader) throws -> String? {
        switch try r.readUInt8() {
        case 0: return nil
        case 1: return try r.readString()
        case let flag: throw DecodeError(description: "optional string flag \(flag) at offset \(r.offset - 1)")
        }
    }

    /// A record in record format `format`, 2 or 3 (its number is written by the caller); format 2
    /// leaves the short GUID out, so only a record without one may be written in it.
    static func encode(_ record: Record, format: UInt8, into w: inout ByteWriter) {
        assert(format == recordFormatWithShortGUID || record.shortGUID == nil, "a short GUID in record format 2")
        w.writeString(record.recordType)
        encode(record.id, into: &w)
        w.writeString(record.recordChangeTag ?? "")
        encode(record.created, into: &w)
        encode(record.modified, into: &w)
        encode(optional: record.parent, into: &w)
        encode(optional: record.share, into: &w)
        if format >= 3 { encode(optional: record.shortGUID, into: &w) }
        encode(record.fields, into: &w)
    }

    /// Fields (a record's; a zone-wide share's, tag 17): a count, then each name and value.
    static func encode(_ fields: RecordFields, into w: inout ByteWriter) {
        w.writeVarint(UInt64(fields.count))
        // Names sorted, so a record's bytes never depend on the order its fields were set in.
        for field in fields.sorted(by: { $0.key < $1.key }) {
            w.writeString(field.key)
            encode(field.value, into: &w)
        }
    }

    static func decodeFields(_ r: inout ByteReader) throws -> RecordFields {
        let n = try r.readVarint()
        guard n <= UInt64(r.remaining) else { throw DecodeError(description: "field count \(n) exceeds entry") }
        var pairs: [(String, FieldValue)] = []
        pairs.reserveCapacity(Int(n))
        for _ in 0..<n {
            let key = try r.readString()
            pairs.append((key, try decodeValue(&r, depth: 0)))
        }
        // A name written twice keeps its last value, as it did when this read into a dictionary.
        return RecordFields(pairs)
    }

    static func decodeRecord(_ r: inout ByteReader, format: UInt8) throws -> Record {
        let type = try r.readString()
        let id = try decodeRecordID(&r)
        let tag = try r.readString()
        let created = try decodeStamp(&r, format: format)
        let modified = try decodeStamp(&r, format: format)
        let parent = format >= 2 ? try decodeOptionalString(&r) : nil
        let share = format >= 2 ? try decodeOptionalString(&r) : nil
        let shortGUID = format >= 3 ? try decodeOptionalString(&r) : nil
        let fields = try decodeFields(&r)
        return Record(recordType: type, id: id, fields: fields, recordChangeTag: tag.isEmpty ? nil : tag,
                      created: created, modified: modified, parent: parent, share: share, shortGUID: shortGUID)
    }

    static func encode(_ v: FieldValue, into w: inout ByteWriter) {
        switch v {
        case .string(let s): w.writeUInt8(1); w.writeString(s)
        case .int64(let i): w.writeUInt8(2); w.writeInt64(i)
        case .double(let d): w.writeUInt8(3); w.writeDouble(d)
        case .timestamp(let t): w.writeUInt8(4); w.writeInt64(t)
        case .bytes(let b): w.writeUInt8(5); w.writeLengthPrefixedBytes(b)
        case .reference(let reference):
            w.writeUInt8(9); encode(reference.recordID, into: &w); w.writeUInt8(actionCode(reference.action))
        case .location(let l):
            w.writeUInt8(10); w.writeDouble(l.latitude); w.writeDouble(l.longitude)
            // One bit per optional number present, in the dictionary's order, then the numbers.
            let measurements = l.measurements
            var present: UInt8 = 0
            for (i, m) in measurements.enumerated() where m.value != nil { present |= 1 << i }
            if l.timestamp != nil { present |= 1 << 5 }
            w.writeUInt8(present)
            for m in measurements { if let v = m.value { w.writeDouble(v) } }
            if let t = l.timestamp { w.writeInt64(t) }
        case .asset(let a):
            w.writeUInt8(11); w.writeUInt8(a.spelling == .asset ? 0 : 1); w.writeString(a.fileChecksum)
            w.writeInt64(a.size)
            for s in a.strings { encode(optional: s.value, into: &w) }
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
        case 6: return .reference(Reference(try decodeRecordID(&r)))
        case 9:
            let id = try decodeRecordID(&r)
            return .reference(Reference(id, action: try decodeAction(&r)))
        case 10:
            var l = Location(latitude: try r.readDouble(), longitude: try r.readDouble())
            let present = try r.readUInt8()
            guard present < 1 << 6 else { throw DecodeError(description: "location flags \(present)") }
            func next(_ bit: Int) throws -> Double? { present & (1 << bit) != 0 ? try r.readDouble() : nil }
            l.horizontalAccuracy = try next(0)
            l.verticalAccuracy = try next(1)
            l.altitude = try next(2)
            l.speed = try next(3)
            l.course = try next(4)
            l.timestamp = present & (1 << 5) != 0 ? try r.readInt64() : nil
            return .location(l)
        case 11:
            let spelling: Asset.Spelling
            switch try r.readUInt8() {
            case 0: spelling = .asset
            case 1: spelling = .assetID
            case let v: throw DecodeError(description: "asset spelling \(v)")
            }
            var a = Asset(spelling: spelling, fileChecksum: try r.readString(), size: try r.readInt64())
            a.referenceChecksum = try decodeOptionalString(&r)
            a.wrappingKey = try decodeOptionalString(&r)
            a.receipt = try decodeOptionalString(&r)
            a.downloadURL = try decodeOptionalString(&r)
            return .asset(a)
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

    static func actionCode(_ action: ReferenceAction) -> UInt8 {
        switch action {
        case .none: 0
        case .deleteSelf: 1
        case .validate: 2
        }
    }

    static func decodeAction(_ r: inout ByteReader) throws -> ReferenceAction {
        switch try r.readUInt8() {
        case 0: return .none
        case 1: return .deleteSelf
        case 2: return .validate
        case let v: throw DecodeError(description: "unknown reference action \(v)")
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

    /// A share as this build writes it (`putShare` tag 11, snapshot flag 2): the fields of tag 5,
    /// which builds before short GUIDs wrote and which is still read, then the optional short GUID.
    static func encode(_ share: ZoneShare, into w: inout ByteWriter) {
        encode(share.zoneID, into: &w)
        encode(share.publicPermission, into: &w)
        w.writeString(share.changeTag)
        w.writeVarint(UInt64(share.participants.count))
        for user in share.participants.keys.sorted() {
            let p = share.participants[user]!
            w.writeString(user); encode(p.permission, into: &w); w.writeUInt8(p.status == .accepted ? 1 : 0)
        }
        encode(optional: share.shortGUID, into: &w)
        if !share.fields.isEmpty { encode(share.fields, into: &w) }
    }

    /// A zone-wide share: `withShortGUID` for tag 11 and later, `withFields` for tag 17.
    static func decodeShare(_ r: inout ByteReader, withShortGUID: Bool, withFields: Bool = false) throws -> ZoneShare {
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
        let shortGUID = withShortGUID ? try decodeOptionalString(&r) : nil
        return ZoneShare(zoneID: zone, publicPermission: pub, participants: participants, changeTag: tag,
                         shortGUID: shortGUID, fields: withFields ? try decodeFields(&r) : [:])
    }

    static func encode(_ sub: Subscription, into w: inout ByteWriter) {
        w.writeString(sub.subscriptionID)
        if sub.needsFormat2 { return SubscriptionCodec.encode(sub, into: &w) }
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
        case SubscriptionCodec.format2: return try SubscriptionCodec.decode(id: id, &r)
        case let v: throw DecodeError(description: "unknown subscription kind \(v)")
        }
    }
}
