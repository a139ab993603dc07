import ZoneCore

/// The payload of one entry of a shared log (the PostgreSQL backend's `zonertc_log` rows): the
/// mutations one batch of requests made, and the notifications those changes owe devices, so
/// every process that applies the entry can deliver them to the push streams it holds.
///
/// Layout: a version byte, the mutations as the journal encodes them, then a varint count of
/// notifications, each user, device, notification ID, subscription ID, scope and optional zone
/// (flag 1), or zone, record name and reason (flag 2: a query subscription's; earlier builds stop
/// at the flag, naming it).
/// Version 2 entries may hold records in record format 2 (`MutationCodec`); version 1 entries,
/// which earlier builds wrote, hold only format 1 and are still read. A daemon of an earlier build
/// meeting a version 2 entry stops with the version, rather than misreading it. Version 3 entries
/// may hold shares with their short GUID (`putShare` tag 11). Version 4 entries hold web push tokens
/// (tags 14 and 15); only entries that do are written as version 4. Version 5 entries hold deletions
/// with their shared roots (tag 16), and may hold web push tokens; only entries with such a deletion
/// are written as version 5. Version 6 entries hold records with a short GUID of their own (record
/// format 3), and may hold anything earlier versions do; only entries with such a record are
/// written as version 6. Version 7 entries hold zone-wide shares with fields (tag 17), and may hold
/// anything earlier versions do; only entries with such a share are written as version 7.
enum SharedLogEntryCodec {
    static let version: UInt8 = 3
    static let versionWithWebTokens: UInt8 = 4
    static let versionWithSharedRoots: UInt8 = 5
    static let versionWithShortGUIDs: UInt8 = 6
    static let versionWithShareFields: UInt8 = 7
    /// The versions this build reads.
    static let readable: ClosedRange<UInt8> = 1...7

    /// The earliest version that holds `mutations`, so that earlier builds read what they can.
    static func version(of mutations: [Mutation]) -> UInt8 {
        if MutationCodec.holdsShareFields(mutations) { return versionWithShareFields }
        if MutationCodec.holdsShortGUIDs(mutations) { return versionWithShortGUIDs }
        if MutationCodec.holdsSharedRoots(mutations) { return versionWithSharedRoots }
        return MutationCodec.holdsWebTokens(mutations) ? versionWithWebTokens : version
    }

    static func encode(_ mutations: [Mutation], _ notes: [DeviceNotification]) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.writeUInt8(version(of: mutations))
        MutationCodec.encode(mutations, into: &w)
        w.writeVarint(UInt64(notes.count))
        for n in notes {
            w.writeString(n.userRecordName)
            w.writeString(n.deviceID)
            w.writeVarint(n.notification.notificationID)
            w.writeString(n.notification.subscriptionID)
            MutationCodec.encode(n.notification.databaseScope, into: &w)
            if let zone = n.notification.zoneID, let name = n.notification.recordName,
               let reason = n.notification.queryNotificationReason {
                // A query subscription's: the record and the reason follow the zone.
                w.writeUInt8(2)
                MutationCodec.encode(zone, into: &w)
                w.writeString(name)
                w.writeUInt8(reasonCode(reason))
            } else if let zone = n.notification.zoneID {
                w.writeUInt8(1)
                MutationCodec.encode(zone, into: &w)
            } else {
                w.writeUInt8(0)
            }
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> ([Mutation], [DeviceNotification]) {
        var r = ByteReader(bytes)
        let v = try r.readUInt8()
        guard readable.contains(v) else {
            throw MutationCodec.DecodeError(description: "log entry format \(v) (this build reads "
                                            + "\(readable.lowerBound) to \(readable.upperBound)): upgrade zonertc")
        }
        let mutations = try MutationCodec.decodeMutations(&r)
        let count = try r.readVarint()
        // Each notification takes at least 5 bytes: a count past that is damage, not a reason to allocate.
        guard count <= UInt64(r.remaining) / 5 else {
            throw MutationCodec.DecodeError(description: "notification count \(count) exceeds entry")
        }
        var notes: [DeviceNotification] = []
        notes.reserveCapacity(Int(count))
        for _ in 0..<count {
            let user = try r.readString()
            let device = try r.readString()
            let id = try r.readVarint()
            let subscription = try r.readString()
            let scope = try MutationCodec.decodeScope(&r)
            let zone: ZoneID?
            var name: String?
            var reason: QueryNotificationReason?
            switch try r.readUInt8() {
            case 0: zone = nil
            case 1: zone = try MutationCodec.decodeZoneID(&r)
            case 2:
                zone = try MutationCodec.decodeZoneID(&r)
                name = try r.readString()
                reason = try decodeReason(&r)
            case let other: throw MutationCodec.DecodeError(description: "zone hint flag \(other)")
            }
            notes.append(DeviceNotification(userRecordName: user, deviceID: device, notification: PushNotification(
                notificationID: id, subscriptionID: subscription, databaseScope: scope, zoneID: zone,
                recordName: name, queryNotificationReason: reason)))
        }
        guard r.remaining == 0 else {
            throw MutationCodec.DecodeError(description: "\(r.remaining) bytes after the log entry")
        }
        return (mutations, notes)
    }

    private static func reasonCode(_ reason: QueryNotificationReason) -> UInt8 {
        switch reason {
        case .recordCreated: return 1
        case .recordUpdated: return 2
        case .recordDeleted: return 3
        }
    }

    private static func decodeReason(_ r: inout ByteReader) throws -> QueryNotificationReason {
        switch try r.readUInt8() {
        case 1: return .recordCreated
        case 2: return .recordUpdated
        case 3: return .recordDeleted
        case let v: throw MutationCodec.DecodeError(description: "query notification reason \(v)")
        }
    }
}
