import ZoneCore

/// Subscription format 2: a subscription that keeps what the Subscription Dictionary says beyond
/// its kind (`firesOn`, `firesOnce`, a query's filters and sort, `notificationInfo`). Written after
/// the kind byte 3 in place of the first format's kinds 0–2, and only for a subscription that
/// needs it (`Subscription.needsFormat2`): every other subscription is written as before, byte
/// for byte, so that journals, snapshots and log entries of subscriptions our peers make do not
/// change, and earlier builds still read them.
enum SubscriptionCodec {
    /// The kind byte that introduces format 2.
    static let format2: UInt8 = 3
    /// Filters and sort descriptors a stored query may hold: the request limits, so that a damaged
    /// count is refused before it is believed.
    static let maxQueryParts = 256
    static let maxInfoStrings = 64

    static func encode(_ sub: Subscription, into w: inout ByteWriter) {
        w.writeUInt8(format2)
        switch sub.kind {
        case .database: w.writeUInt8(0)
        case .zone(let z): w.writeUInt8(1); MutationCodec.encode(z, into: &w)
        case .query(let type, let z):
            w.writeUInt8(2); w.writeString(type)
            if let z { w.writeUInt8(1); MutationCodec.encode(z, into: &w) } else { w.writeUInt8(0) }
        }
        w.writeUInt8(sub.firesOn.rawValue)
        w.writeUInt8(sub.firesOnce ? 1 : 0)
        if let query = sub.query {
            w.writeUInt8(1)
            encode(query, into: &w)
        } else {
            w.writeUInt8(0)
        }
        if let info = sub.notificationInfo {
            w.writeUInt8(1)
            encode(info, into: &w)
        } else {
            w.writeUInt8(0)
        }
    }

    /// Reads what follows the kind byte 3 of the subscription `id`.
    static func decode(id: String, _ r: inout ByteReader) throws -> Subscription {
        var sub: Subscription
        switch try r.readUInt8() {
        case 0: sub = Subscription(subscriptionID: id, kind: .database)
        case 1: sub = Subscription(subscriptionID: id, kind: .zone(try MutationCodec.decodeZoneID(&r)))
        case 2:
            let type = try r.readString()
            let zone = try flag(&r) ? try MutationCodec.decodeZoneID(&r) : nil
            sub = Subscription(subscriptionID: id, kind: .query(recordType: type, zoneID: zone))
        case let v: throw MutationCodec.DecodeError(description: "unknown subscription kind \(v)")
        }
        let fires = try r.readUInt8()
        guard fires & ~Subscription.FiresOn.all.rawValue == 0 else {
            throw MutationCodec.DecodeError(description: "subscription firesOn bits \(fires)")
        }
        sub.firesOn = Subscription.FiresOn(rawValue: fires)
        sub.firesOnce = try flag(&r)
        if try flag(&r) { sub.query = try decodeQuery(&r) }
        if try flag(&r) { sub.notificationInfo = try decodeInfo(&r) }
        return sub
    }

    private static func flag(_ r: inout ByteReader) throws -> Bool {
        switch try r.readUInt8() {
        case 0: return false
        case 1: return true
        case let v: throw MutationCodec.DecodeError(description: "flag byte \(v)")
        }
    }

    private static func count(_ r: inout ByteReader, limit: Int, _ what: String) throws -> Int {
        let n = try r.readVarint()
        guard n <= UInt64(limit) else { throw MutationCodec.DecodeError(description: "\(n) \(what)") }
        return Int(n)
    }

    static func encode(_ q: RecordQuery, into w: inout ByteWriter) {
        w.writeString(q.recordType)
        w.writeVarint(UInt64(q.filters.count))
        for f in q.filters {
            w.writeString(f.comparator.rawValue)
            w.writeString(f.fieldName)
            MutationCodec.encode(f.value, into: &w)
            if let d = f.distance { w.writeUInt8(1); w.writeDouble(d) } else { w.writeUInt8(0) }
        }
        w.writeVarint(UInt64(q.sort.count))
        for s in q.sort {
            w.writeString(s.fieldName)
            w.writeUInt8(s.ascending ? 1 : 0)
            if let l = s.relativeLocation { w.writeUInt8(1); MutationCodec.encode(.location(l), into: &w) } else {
                w.writeUInt8(0)
            }
        }
    }

    static func decodeQuery(_ r: inout ByteReader) throws -> RecordQuery {
        var q = RecordQuery(recordType: try r.readString())
        for _ in 0..<(try count(&r, limit: maxQueryParts, "filters")) {
            let name = try r.readString()
            guard let comparator = QueryComparator(rawValue: name) else {
                throw MutationCodec.DecodeError(description: "unknown comparator \(name)")
            }
            let field = try r.readString()
            let value = try MutationCodec.decodeValue(&r, depth: 0)
            let distance = try flag(&r) ? try r.readDouble() : nil
            q.filters.append(QueryFilter(comparator, field, value, distance: distance))
        }
        for _ in 0..<(try count(&r, limit: maxQueryParts, "sort descriptors")) {
            let field = try r.readString()
            let ascending = try flag(&r)
            var location: Location?
            if try flag(&r) {
                guard case .location(let l) = try MutationCodec.decodeValue(&r, depth: 0) else {
                    throw MutationCodec.DecodeError(description: "a relativeLocation that is not a location")
                }
                location = l
            }
            q.sort.append(QuerySort(field, ascending: ascending, relativeLocation: location))
        }
        return q
    }

    static func encode(_ info: NotificationInfo, into w: inout ByteWriter) {
        w.writeVarint(UInt64(info.strings.count))
        for key in info.strings.keys.sorted() {
            w.writeString(key)
            w.writeString(info.strings[key] ?? "")
        }
        if let args = info.alertLocalizationArgs {
            w.writeUInt8(1)
            w.writeVarint(UInt64(args.count))
            for a in args { w.writeString(a) }
        } else {
            w.writeUInt8(0)
        }
        for b in [info.shouldBadge, info.shouldSendContentAvailable] { w.writeUInt8(b.map { $0 ? 2 : 1 } ?? 0) }
    }

    static func decodeInfo(_ r: inout ByteReader) throws -> NotificationInfo {
        var info = NotificationInfo()
        for _ in 0..<(try count(&r, limit: maxInfoStrings, "notification strings")) {
            let key = try r.readString()
            info.strings[key] = try r.readString()
        }
        if try flag(&r) {
            info.alertLocalizationArgs = []
            for _ in 0..<(try count(&r, limit: NotificationInfo.maxBytes, "localization arguments")) {
                info.alertLocalizationArgs?.append(try r.readString())
            }
        }
        func optionalBool() throws -> Bool? {
            switch try r.readUInt8() {
            case 0: return nil
            case 1: return false
            case 2: return true
            case let v: throw MutationCodec.DecodeError(description: "optional boolean \(v)")
            }
        }
        info.shouldBadge = try optionalBool()
        info.shouldSendContentAvailable = try optionalBool()
        return info
    }
}
