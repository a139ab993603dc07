/// A deleted record remembered for change feeds until tokens that could need it have expired.
struct Tombstone: Hashable, Sendable {
    var recordType: String
    var deletedAtMs: Int64
    /// The roots of record shares whose hierarchy held the record when it was deleted (the record
    /// itself when it was one; a share record's root), so that a record-share participant hears only
    /// of deletions in hierarchies shared with them. Nil when its zone held no record share then, or
    /// when an earlier build, which did not keep them, deleted it: every participant hears of it.
    var sharedRoots: [String]? = nil
}

/// One record zone with its records, tombstones, change feed and share.
struct ZoneState: Sendable {
    /// The zone's ID, owner resolved.
    let id: ZoneID
    /// Distinguishes a zone from an earlier one of the same name, so old tokens expire.
    let incarnation: UInt64
    let createdAtMs: Int64
    /// The last change sequence in this zone.
    var sequence: UInt64 = 0
    var records: [RecordKey: Record] = [:]
    var tombstones: [RecordKey: Tombstone] = [:]
    var log = ChangeLog<RecordKey>()
    /// Who refers to whom with `DELETE_SELF` or `VALIDATE`, for deletes.
    var references = ReferenceIndex()
    var share: ZoneShare? {
        didSet { refreshSharedAccess() }
    }
    /// The zone's record shares (`cloudkit.share` records other than the zone-wide one), by their
    /// record's key: kept with the records (`put`, `remove`, snapshot load), as every request
    /// through the shared database asks who may reach which records.
    private(set) var recordShares: [RecordKey: ZoneShare] = [:]
    /// What each user who accepted a record share may do, by root record name: such a user
    /// reaches those roots and their descendants (by `parent`) only.
    private(set) var recordGrants: [String: [String: SharePermission]] = [:]
    /// The names of the records the zone's record shares share (their roots).
    private(set) var sharedRootNames: Set<String> = []
    /// What each user who accepted the share may do, by name: the share's `effectivePermission`,
    /// kept with it, as every request through the shared database checks it (and reading the
    /// share for that copied all of it out of the zone and destroyed it again).
    private(set) var acceptedPermissions: [String: SharePermission] = [:]
    /// The shared database of each user who accepted the share, in name order: kept with it, as
    /// every change in the zone reaches them (keys made once, their names hashed once).
    private(set) var sharedDatabases: [DatabaseKey] = []
    /// The owner's private database, which every change in the zone reaches.
    let ownerDatabase: DatabaseKey
    /// Identity folded into this zone's tokens (hashed once: every change-feed request reads it twice).
    let tokenOwner: UInt64

    /// Every user who accepted the zone-wide share or a record share: the zone is in their shared database.
    var acceptedUsers: Set<String> { Set(acceptedPermissions.keys).union(recordGrants.keys) }

    /// Notes that the record `key` is now `record` (nil: deleted), for the record shares' index.
    /// Cheap for records that are no share (one type comparison); a share change recomputes the grants.
    mutating func noteShareRecord(_ key: RecordKey, old: Record?, new: Record?) {
        let wasShare = old.map(RecordShare.isRecordShare) ?? false
        let isShare = new.map(RecordShare.isRecordShare) ?? false
        guard wasShare || isShare else { return }
        recordShares[key] = new.flatMap(RecordShare.share(in:))
        refreshSharedAccess()
    }

    private mutating func refreshSharedAccess() {
        acceptedPermissions = share.map(Self.acceptedPermissions) ?? [:]
        var grants: [String: [String: SharePermission]] = [:]
        for share in recordShares.values {
            guard let root = share.rootRecordName else { continue }
            for (user, p) in share.participants where p.status == .accepted {
                grants[user, default: [:]][root] = p.permission
            }
        }
        recordGrants = grants
        sharedRootNames = Set(recordShares.values.compactMap(\.rootRecordName))
        sharedDatabases = acceptedUsers.sorted().map { DatabaseKey(user: $0, scope: .shared) }
    }

    /// `share.effectivePermission(for:)` for every user it is not nil for.
    private static func acceptedPermissions(_ share: ZoneShare) -> [String: SharePermission] {
        var permissions: [String: SharePermission] = [:]
        for (user, participant) in share.participants where participant.status == .accepted {
            permissions[user] = participant.permission
        }
        return permissions
    }

    init(id: ZoneID, incarnation: UInt64, createdAtMs: Int64) {
        self.id = id
        self.incarnation = incarnation
        self.createdAtMs = createdAtMs
        tokenOwner = FNV1a.hash("zone", id.ownerName, id.zoneName)
        ownerDatabase = DatabaseKey(user: id.ownerName, scope: .private)
    }
}

/// How a zone changed, as a database change feed reports it.
enum ZoneChangeKind: UInt8, Sendable {
    case changed = 0, deleted = 1, purged = 2
}

struct DatabaseState: Sendable {
    var sequence: UInt64 = 0
    private(set) var zoneStatus: [ZoneID: ZoneChangeKind] = [:]
    var log = ChangeLog<ZoneID>()
    var subscriptions: [String: Subscription] = [:]
    /// The zone last reported `.changed` here, when that was the last report: its status is
    /// `.changed` already. Every record saved reports its zone changed to the owner's and each
    /// participant's database, one zone over and over, and each report wrote the same status
    /// again (a lookup as dear as the feed's own).
    private var lastChanged: ZoneID?

    mutating func zoneChanged(_ zone: ZoneID, _ kind: ZoneChangeKind) {
        sequence += 1
        if kind != .changed || lastChanged != zone { zoneStatus[zone] = kind }
        lastChanged = kind == .changed ? zone : nil
        log.record(zone, at: sequence)
    }

    /// Sets a zone's status as a snapshot recorded it (its feed is restored apart).
    mutating func restoreStatus(_ kind: ZoneChangeKind, of zone: ZoneID) {
        zoneStatus[zone] = kind
        lastChanged = nil
    }
}

/// Everything the store holds; changed only by applying `Mutation`s, so the journal replays it.
struct StoreState: Sendable {
    var zones: [ZoneID: ZoneState] = [:]
    var databases: [DatabaseKey: DatabaseState] = [:]
    /// Devices registered for push, per user.
    var devices: [String: Set<String>] = [:]
    /// The public database's query subscriptions by record type, derived from the databases'.
    var publicQueries = PublicQueryIndex()
    /// Web clients' push tokens (tokens/create), by digest.
    var webTokens = WebTokenTable()
    /// The shares and records each short GUID leads to (records/resolve).
    var shortGUIDs = ShortGUIDIndex()
    var nextChangeTag: UInt64 = 1
    var nextIncarnation: UInt64 = 1

    func defaultZoneID(of user: String) -> ZoneID { ZoneID(zoneName: ZoneID.defaultZoneName, ownerName: user) }

    /// The subscriptions of the database `key`, read where the database sits: the dictionary's
    /// getters (its subscript, and its values' by position) copy the whole database out, feed and
    /// zone statuses along, and destroy it again; its values' modify accessor lends it in place.
    /// Called after a change was applied, when the databases are unique already (lending them
    /// then never copies them).
    mutating func subscriptions(of key: DatabaseKey) -> [String: Subscription]? {
        guard let slot = databases.index(forKey: key) else { return nil }
        return Self.subscriptions(in: &databases.values[slot])
    }

    private static func subscriptions(in database: inout DatabaseState) -> [String: Subscription] {
        database.subscriptions
    }
}
