import ZoneCore

/// Encodes the whole store state for compaction: what the journal would rebuild, in one piece.
///
/// Change sequences are kept exactly, so change tokens issued before a compaction stay valid.
/// Tombstones older than the token retention window are left out: no valid token can need them.
///
/// Versions: the magic's digit. Snapshot 2 holds records in `MutationCodec`'s record format 2;
/// snapshot 1, written by builds before it, holds them in record format 1 and still loads.
/// Snapshot 3 is snapshot 2 followed by the web push tokens (`WebPushToken`); it is written only
/// when the store holds a token, so a store that never had one stays readable by earlier builds,
/// and one that has refuses them ("upgrade zonertc") rather than forgetting its tokens.
/// Snapshot 4 is snapshot 3 (its token section always present) whose tombstones are each followed by
/// their shared roots (flag 0: none kept; 1: a count and the names); it is written only when a
/// tombstone kept holds them (`Tombstone.sharedRoots`), which only zones with record shares make.
/// Snapshot 5 is snapshot 4 with its records in record format 3 (each with its optional short GUID);
/// it is written only when a record has a short GUID (`Record.shortGUID`). Snapshot 6 is snapshot 5
/// whose zone-wide shares may be written with their fields (share flag 3, tag 17's layout); it is
/// written only when a zone-wide share has fields (`ZoneShare.fields`).
enum SnapshotCodec {
    static let magic: [UInt8] = Array("ZRSNAP2\n".utf8)
    static let magicWithWebTokens: [UInt8] = Array("ZRSNAP3\n".utf8)
    static let magicWithSharedRoots: [UInt8] = Array("ZRSNAP4\n".utf8)
    static let magicWithShortGUIDs: [UInt8] = Array("ZRSNAP5\n".utf8)
    static let magicWithShareFields: [UInt8] = Array("ZRSNAP6\n".utf8)
    /// The snapshot versions this build reads, with the record format each holds.
    static let readable: [(magic: [UInt8], recordFormat: UInt8)] = [
        (Array("ZRSNAP1\n".utf8), 1), (magic, MutationCodec.recordFormat),
        (magicWithWebTokens, MutationCodec.recordFormat), (magicWithSharedRoots, MutationCodec.recordFormat),
        (magicWithShortGUIDs, MutationCodec.recordFormatWithShortGUID),
        (magicWithShareFields, MutationCodec.recordFormatWithShortGUID),
    ]

    static func encode(_ state: StoreState, generation: UInt64, pruneTombstonesBeforeMs: Int64) -> [UInt8] {
        var w = ByteWriter(capacity: 1 << 16)
        let tokens = state.webTokens.byDigest.keys.sorted()
        let withShareFields = state.zones.values.contains { $0.share.map { !$0.fields.isEmpty } ?? false }
        let withGUIDs = withShareFields || state.shortGUIDs.holdsRecords
        let withRoots = withGUIDs || state.zones.values.contains { zone in
            zone.tombstones.values.contains { $0.sharedRoots != nil && $0.deletedAtMs >= pruneTombstonesBeforeMs }
        }
        let recordFormat = withGUIDs ? MutationCodec.recordFormatWithShortGUID : MutationCodec.recordFormat
        w.writeBytes(withShareFields ? magicWithShareFields : withGUIDs ? magicWithShortGUIDs
                     : withRoots ? magicWithSharedRoots
                     : tokens.isEmpty ? magic : magicWithWebTokens)
        w.writeUInt64(generation)
        w.writeVarint(state.nextChangeTag)
        w.writeVarint(state.nextIncarnation)
        let users = state.devices.keys.sorted()
        w.writeVarint(UInt64(users.count))
        for user in users {
            w.writeString(user)
            let devices = state.devices[user]!.sorted()
            w.writeVarint(UInt64(devices.count))
            for d in devices { w.writeString(d) }
        }
        let dbKeys = state.databases.keys.sorted { ($0.user, $0.scope.rawValue) < ($1.user, $1.scope.rawValue) }
        w.writeVarint(UInt64(dbKeys.count))
        for key in dbKeys {
            let db = state.databases[key]!
            w.writeString(key.user)
            MutationCodec.encode(key.scope, into: &w)
            w.writeVarint(db.sequence)
            w.writeVarint(UInt64(db.log.latest.count))
            for (zone, seq) in db.log.latest.sorted(by: { $0.value < $1.value }) {
                MutationCodec.encode(zone, into: &w)
                w.writeVarint(seq)
                w.writeUInt8(db.zoneStatus[zone]?.rawValue ?? 0)
            }
            w.writeVarint(UInt64(db.subscriptions.count))
            for id in db.subscriptions.keys.sorted() { MutationCodec.encode(db.subscriptions[id]!, into: &w) }
        }
        let zoneIDs = state.zones.keys.sorted { ($0.ownerName, $0.zoneName) < ($1.ownerName, $1.zoneName) }
        w.writeVarint(UInt64(zoneIDs.count))
        for id in zoneIDs {
            let zone = state.zones[id]!
            MutationCodec.encode(id, into: &w)
            w.writeVarint(zone.incarnation)
            w.writeInt64(zone.createdAtMs)
            w.writeVarint(zone.sequence)
            // 3: a share with its short GUID and fields; 2: with its short GUID; 1 (earlier builds): without.
            if let share = zone.share {
                w.writeUInt8(share.fields.isEmpty ? 2 : 3)
                MutationCodec.encode(share, into: &w)
            } else {
                w.writeUInt8(0)
            }
            let live = zone.log.latest.sorted { $0.value < $1.value }
            let records = live.filter { zone.records[$0.key] != nil }
            w.writeVarint(UInt64(records.count))
            for (name, seq) in records {
                w.writeVarint(seq)
                MutationCodec.encode(zone.records[name]!, format: recordFormat, into: &w)
            }
            let tombs = live.filter {
                guard let t = zone.tombstones[$0.key] else { return false }
                return t.deletedAtMs >= pruneTombstonesBeforeMs
            }
            w.writeVarint(UInt64(tombs.count))
            for (name, seq) in tombs {
                let t = zone.tombstones[name]!
                w.writeVarint(seq); w.writeString(name.name); w.writeString(t.recordType); w.writeInt64(t.deletedAtMs)
                guard withRoots else { continue }
                if let roots = t.sharedRoots {
                    w.writeUInt8(1)
                    MutationCodec.encode(roots, into: &w)
                } else {
                    w.writeUInt8(0)
                }
            }
        }
        if !tokens.isEmpty || withRoots {
            w.writeVarint(UInt64(tokens.count))
            for digest in tokens { MutationCodec.encode(state.webTokens[digest]!, into: &w) }
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> (state: StoreState, generation: UInt64) {
        var r = ByteReader(bytes)
        let head = Array(try r.readBytes(magic.count))
        guard let format = readable.first(where: { $0.magic == head })?.recordFormat else {
            throw MutationCodec.DecodeError(description: head.starts(with: Array("ZRSNAP".utf8))
                ? "snapshot version '\(String(decoding: head.dropFirst(6).prefix(1), as: UTF8.self))' is newer than "
                  + "this build reads (1 to 6): upgrade zonertc"
                : "not a ZoneRTC snapshot (bad magic)")
        }
        let generation = try r.readUInt64()
        var state = StoreState()
        state.nextChangeTag = try r.readVarint()
        state.nextIncarnation = try r.readVarint()
        for _ in 0..<(try count(&r)) {
            let user = try r.readString()
            var set = Set<String>()
            for _ in 0..<(try count(&r)) { set.insert(try r.readString()) }
            state.devices[user] = set
        }
        for _ in 0..<(try count(&r)) {
            let key = DatabaseKey(user: try r.readString(), scope: try MutationCodec.decodeScope(&r))
            var db = DatabaseState()
            db.sequence = try r.readVarint()
            var pairs: [(key: ZoneID, seq: UInt64)] = []
            for _ in 0..<(try count(&r)) {
                let zone = try MutationCodec.decodeZoneID(&r)
                let seq = try r.readVarint()
                pairs.append((zone, seq))
                db.restoreStatus(ZoneChangeKind(rawValue: try r.readUInt8()) ?? .changed, of: zone)
            }
            db.log = ChangeLog(restoring: pairs)
            for _ in 0..<(try count(&r)) {
                let sub = try MutationCodec.decodeSubscription(&r)
                db.subscriptions[sub.subscriptionID] = sub
                if key.scope == .public { state.publicQueries.put(user: key.user, sub) }
            }
            state.databases[key] = db
        }
        for _ in 0..<(try count(&r)) {
            let id = try MutationCodec.decodeZoneID(&r)
            var zone = ZoneState(id: id, incarnation: try r.readVarint(), createdAtMs: try r.readInt64())
            zone.sequence = try r.readVarint()
            switch try r.readUInt8() {
            case 0: break
            case 1: zone.share = try MutationCodec.decodeShare(&r, withShortGUID: false)
            case 2: zone.share = try MutationCodec.decodeShare(&r, withShortGUID: true)
            case 3 where head == magicWithShareFields:
                zone.share = try MutationCodec.decodeShare(&r, withShortGUID: true, withFields: true)
            case let flag: throw MutationCodec.DecodeError(description: "share flag \(flag) of zone \(id)")
            }
            var pairs: [(key: RecordKey, seq: UInt64)] = []
            for _ in 0..<(try count(&r)) {
                let seq = try r.readVarint()
                let record = try MutationCodec.decodeRecord(&r, format: format)
                let key = RecordKey(record.id.recordName)
                zone.records[key] = record
                zone.noteShareRecord(key, old: nil, new: record)
                zone.references.add(key, record)
                pairs.append((key, seq))
            }
            for _ in 0..<(try count(&r)) {
                let seq = try r.readVarint()
                let key = RecordKey(try r.readString())
                var tomb = Tombstone(recordType: try r.readString(), deletedAtMs: try r.readInt64())
                if head == magicWithSharedRoots || head == magicWithShortGUIDs || head == magicWithShareFields {
                    switch try r.readUInt8() {
                    case 0: break
                    case 1: tomb.sharedRoots = try MutationCodec.decodeNames(&r)
                    case let flag: throw MutationCodec.DecodeError(description: "shared roots flag \(flag)")
                    }
                }
                zone.tombstones[key] = tomb
                pairs.append((key, seq))
            }
            zone.log = ChangeLog(restoring: pairs)
            state.zones[id] = zone
        }
        if [magicWithWebTokens, magicWithSharedRoots, magicWithShortGUIDs, magicWithShareFields].contains(head) {
            for _ in 0..<(try count(&r)) { state.webTokens.put(try MutationCodec.decodeWebToken(&r)) }
        }
        state.shortGUIDs.rebuild(from: state.zones)
        guard r.isAtEnd else { throw MutationCodec.DecodeError(description: "\(r.remaining) stray bytes after snapshot") }
        return (state, generation)
    }

    private static func count(_ r: inout ByteReader) throws -> Int {
        let n = try r.readVarint()
        guard n <= UInt64(r.remaining) else { throw MutationCodec.DecodeError(description: "count \(n) exceeds snapshot") }
        return Int(n)
    }
}
