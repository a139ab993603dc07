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

    /// A request without a signed-in user that may read the public database and nothing else
    /// (CloudKit's API token without a web auth token). The engine refuses it every other
    /// database and every write with `AUTHENTICATION_REQUIRED`.
    public static func anonymous(deviceID: String? = nil, now: Instant) -> RequestContext {
        RequestContext(user: ReservedNames.anonymousReader, deviceID: deviceID, now: now)
    }

    /// Whether this is the anonymous reader's request.
    public var isAnonymous: Bool { user == ReservedNames.anonymousReader }
}

/// How a save treats the server's copy, in the shape of the CloudKit framework's
/// `CKModifyRecordsOperation.RecordSavePolicy`: what `ModifyRecordsRequest(saves:deletes:savePolicy:)`
/// turns into record operations.
public enum SavePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// A record without a change tag is created (`create`); one with a tag replaces the version
    /// the tag names (`replace`): a conflict is `serverRecordChanged`.
    case ifServerRecordUnchanged
    /// Only the fields sent change, whatever the server's version (`forceUpdate`).
    case changedKeys
    /// The record becomes what was sent, whatever the server's version (`forceReplace`).
    case allKeys
}

/// A `records/modify` request: operations applied in order, one per record.
public struct ModifyRecordsRequest: Sendable, Hashable {
    public var operations: [RecordOperation]
    /// In a custom zone, one failed operation fails the zone's others (`batchRequestFailed`) and
    /// none is applied. CloudKit's default: true; it does not apply to the default zone.
    public var atomic: Bool

    public init(operations: [RecordOperation], atomic: Bool = true) {
        self.operations = operations
        self.atomic = atomic
    }

    /// The request the CloudKit framework's `CKModifyRecordsOperation` would make: `saves` under
    /// `savePolicy`, then `deletes` (`forceDelete`).
    public init(saves: [Record] = [], deletes: [RecordID] = [], savePolicy: SavePolicy = .ifServerRecordUnchanged,
                atomic: Bool = true) {
        var operations: [RecordOperation] = []
        operations.reserveCapacity(saves.count + deletes.count)
        for record in saves {
            switch savePolicy {
            case .ifServerRecordUnchanged:
                operations.append(record.recordChangeTag == nil ? .create(record) : .replace(record))
            case .changedKeys: operations.append(.forceUpdate(record))
            case .allKeys: operations.append(.forceReplace(record))
            }
        }
        for id in deletes { operations.append(.forceDelete(id)) }
        self.init(operations: operations, atomic: atomic)
    }

    /// The records the request saves, in order (whatever their operations).
    public var saves: [Record] { operations.compactMap(\.record) }
    /// The records the request deletes, in order.
    public var deletes: [RecordID] { operations.lazy.filter(\.isDelete).map(\.recordID) }
    /// The operations' types, in order.
    public var kinds: [RecordOperation.Kind] { operations.map(\.kind) }

    /// Operations that save a record.
    public var saveCount: Int { operations.count - deleteCount }
    /// Operations that delete one.
    public var deleteCount: Int {
        var n = 0
        for i in operations.indices where operations[i].isDelete { n += 1 }
        return n
    }

    /// Bytes the request counts for against the 2 MB request limit.
    var dataSize: Int {
        // Read where they sit: iterating would copy each operation's record.
        var size = 0
        for i in operations.indices {
            switch operations[i] {
            case .create(let r), .update(let r, _), .forceUpdate(let r, _), .replace(let r), .forceReplace(let r):
                size += r.fieldDataSize + r.id.recordName.utf8.count + r.recordType.utf8.count
            case .delete(let id, _), .forceDelete(let id):
                size += id.recordName.utf8.count
            }
        }
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

/// Per-operation outcomes of `modifyRecords`, in the request's order.
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
