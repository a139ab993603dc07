import ZoneCore

/// Who is asking, from which device, and when: passed with every engine operation.
public struct RequestContext: Sendable, Hashable {
    /// The acting user's record name.
    public var user: String
    /// The device the request comes from; notifications skip it.
    public var deviceID: String?
    public var now: Instant

    public init(user: String, deviceID: String? = nil, now: Instant) {
        self.user = user
        self.deviceID = deviceID
        self.now = now
    }

    var clientKey: String { "\(user)/\(deviceID ?? "-")" }
}

/// How a save treats the server's copy.
public enum SavePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The change tag must match the server's (a new record must not exist), else `serverRecordChanged`.
    case ifServerRecordUnchanged
    /// Overwrite only the fields the request carries; tags ignored.
    case changedKeys
    /// Overwrite the whole record; tags ignored.
    case allKeys
}

/// A `modifyRecords` request.
public struct ModifyRecordsRequest: Sendable, Hashable {
    public var saves: [Record]
    public var deletes: [RecordID]
    public var savePolicy: SavePolicy
    /// Per zone: any failure fails the zone's other items with `batchRequestFailed`.
    public var atomic: Bool

    public init(saves: [Record] = [], deletes: [RecordID] = [], savePolicy: SavePolicy = .ifServerRecordUnchanged,
                atomic: Bool = false) {
        self.saves = saves
        self.deletes = deletes
        self.savePolicy = savePolicy
        self.atomic = atomic
    }

    /// Bytes the request counts for against the 2 MB request limit.
    var dataSize: Int {
        // Records read where they sit: iterating would copy each one.
        var size = 0
        for i in saves.indices {
            size += saves[i].fieldDataSize + saves[i].id.recordName.utf8.count + saves[i].recordType.utf8.count
        }
        for i in deletes.indices { size += deletes[i].recordName.utf8.count }
        return size
    }
}

/// The outcome of one item of a request.
public enum RecordResult: Sendable, Hashable {
    case saved(Record)
    case deleted(RecordID)
    case failed(RecordID, StoreError)

    public var recordID: RecordID {
        switch self {
        case .saved(let r): return r.id
        case .deleted(let id), .failed(let id, _): return id
        }
    }

    public var error: StoreError? { if case .failed(_, let e) = self { return e } else { return nil } }
    public var record: Record? { if case .saved(let r) = self { return r } else { return nil } }
}

/// Per-item outcomes of `modifyRecords`: saves first, in request order, then deletes.
public struct ModifyRecordsResult: Sendable, Hashable {
    public var results: [RecordResult]

    public init(results: [RecordResult]) { self.results = results }

    public var savedRecords: [Record] { results.compactMap(\.record) }
    public var failures: [(RecordID, StoreError)] {
        results.compactMap { if case .failed(let id, let e) = $0 { return (id, e) } else { return nil } }
    }
}

/// Per-item outcome of a lookup: the record or the reason it is not there.
public enum LookupResult: Sendable, Hashable {
    case found(Record)
    case failed(RecordID, StoreError)

    public var record: Record? { if case .found(let r) = self { return r } else { return nil } }
    public var error: StoreError? { if case .failed(_, let e) = self { return e } else { return nil } }
}

/// A page of a zone's change feed.
public struct ZoneChanges: Sendable, Hashable {
    public var changed: [Record]
    public var deleted: [DeletedRecord]
    public var syncToken: ChangeToken
    public var moreComing: Bool

    public init(changed: [Record], deleted: [DeletedRecord], syncToken: ChangeToken, moreComing: Bool) {
        self.changed = changed
        self.deleted = deleted
        self.syncToken = syncToken
        self.moreComing = moreComing
    }
}

/// A page of a database's change feed: zones changed, deleted, purged.
public struct DatabaseChanges: Sendable, Hashable {
    public var changedZones: [ZoneID]
    public var deletedZones: [ZoneID]
    public var purgedZones: [ZoneID]
    public var syncToken: ChangeToken
    public var moreComing: Bool

    public init(changedZones: [ZoneID], deletedZones: [ZoneID], purgedZones: [ZoneID], syncToken: ChangeToken,
                moreComing: Bool) {
        self.changedZones = changedZones
        self.deletedZones = deletedZones
        self.purgedZones = purgedZones
        self.syncToken = syncToken
        self.moreComing = moreComing
    }
}

/// The outcome of one zone of a `modifyZones` request.
public enum ZoneResult: Sendable, Hashable {
    case saved(ZoneID)
    case deleted(ZoneID)
    case failed(ZoneID, StoreError)

    public var error: StoreError? { if case .failed(_, let e) = self { return e } else { return nil } }
}

/// The outcome of one subscription of a `modifySubscriptions` request.
public enum SubscriptionResult: Sendable, Hashable {
    case saved(Subscription)
    case deleted(String)
    case failed(String, StoreError)

    public var error: StoreError? { if case .failed(_, let e) = self { return e } else { return nil } }
}

/// A change to a zone-wide share's participants or public permission.
public struct ShareUpdate: Sendable, Hashable {
    public var publicPermission: SharePermission?
    /// Participants to add (or whose permission to change), by user record name.
    public var addParticipants: [String: SharePermission]
    /// Participants to remove: they lose access.
    public var removeParticipants: [String]

    public init(publicPermission: SharePermission? = nil, addParticipants: [String: SharePermission] = [:],
                removeParticipants: [String] = []) {
        self.publicPermission = publicPermission
        self.addParticipants = addParticipants
        self.removeParticipants = removeParticipants
    }
}
