import ZoneCore

extension StoreEngine {
    /// A page of a custom zone's changes since `token` (nil: every live record).
    ///
    /// A record changed several times since the token comes once, in its latest version;
    /// deletions come as IDs with their type. The page holds at most `resultsLimit` items (and
    /// never more than the server's own page size); `moreComing` says to ask again.
    public mutating func fetchZoneChanges(_ zoneID: ZoneID, since token: ChangeToken?, resultsLimit: Int? = nil,
                                          scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> ZoneChanges {
        try admit(ctx, touchesZone: true)
        try Self.checkHasChangeFeeds(scope, "changes/zone")
        if zoneID.isDefaultZone {
            throw StoreError(.invalidArguments, "the default zone has no change feed: use a custom zone")
        }
        let id = try resolveZone(zoneID, scope: scope, access: .read, ctx)
        guard let zone = state.zones[id] else { throw StoreError(.zoneNotFound, "zone \(id) does not exist") }
        var since: UInt64 = 0
        if let token {
            let p = try checkToken(token, kind: .zone, owner: zone.tokenOwner, ctx)
            guard p.incarnation == zone.incarnation, p.sequence <= zone.sequence else {
                throw StoreError(.changeTokenExpired,
                                 "the token is from an earlier zone of the same name: fetch again without a token")
            }
            since = p.sequence
        }
        let limit = pageSize(resultsLimit)
        let page = zone.log.changes(after: since, limit: limit)
        var changed: [Record] = []
        changed.reserveCapacity(page.keys.count)
        var deleted: [DeletedRecord] = []
        // A record-share participant is told of the hierarchies shared with them: of records there
        // now, and of deletions of records that were there (by the roots the tombstone keeps).
        let grants = recordGrants(in: id, scope: scope, ctx)
        for entry in page.keys {
            if let record = zone.records[entry.key] {
                if let grants, !reaches(record, in: id, grants) { continue }
                changed.append(record)
            } else if token != nil, let tomb = zone.tombstones[entry.key] {
                if let grants, let roots = tomb.sharedRoots, !roots.contains(where: { grants[$0] != nil }) { continue }
                deleted.append(DeletedRecord(id: RecordID(recordName: entry.key.name, zoneID: id),
                                             recordType: tomb.recordType))
            }
        }
        let reached = page.moreComing ? (page.keys.last?.seq ?? since) : zone.sequence
        let newToken = ChangeToken(.init(kind: .zone, owner: zone.tokenOwner, incarnation: zone.incarnation,
                                         sequence: reached, issuedAtMs: ctx.now.millisecondsSinceEpoch))
        return ZoneChanges(changed: changed, deleted: deleted, syncToken: newToken, moreComing: page.moreComing)
    }

    /// A page of the database's zone changes since `token` (nil: every zone there now).
    public mutating func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int? = nil,
                                              scope: DatabaseScope,
                                              _ ctx: RequestContext) throws(StoreError) -> DatabaseChanges {
        try admit(ctx, touchesZone: false)
        try Self.checkHasChangeFeeds(scope, "changes/database")
        try checkSignedIn(scope: scope, access: .read, ctx)
        let key = DatabaseKey(user: ctx.user, scope: scope)
        let db = state.databases[key] ?? DatabaseState()
        var since: UInt64 = 0
        if let token {
            let p = try checkToken(token, kind: .database, owner: key.tokenOwner, ctx)
            guard p.sequence <= db.sequence else {
                throw StoreError(.changeTokenExpired, "the token is ahead of this database: fetch again without one")
            }
            since = p.sequence
        }
        let page = db.log.changes(after: since, limit: pageSize(resultsLimit))
        var result = DatabaseChanges(changedZones: [], deletedZones: [], purgedZones: [], syncToken: ChangeToken(rawValue: ""),
                                     moreComing: page.moreComing)
        for entry in page.keys {
            switch db.zoneStatus[entry.key] ?? .changed {
            case .changed: result.changedZones.append(entry.key)
            case .deleted: if token != nil { result.deletedZones.append(entry.key) }
            case .purged: if token != nil { result.purgedZones.append(entry.key) }
            }
        }
        let reached = page.moreComing ? (page.keys.last?.seq ?? since) : db.sequence
        result.syncToken = ChangeToken(.init(kind: .database, owner: key.tokenOwner, incarnation: 0, sequence: reached,
                                             issuedAtMs: ctx.now.millisecondsSinceEpoch))
        return result
    }

    private func pageSize(_ resultsLimit: Int?) -> Int {
        guard let r = resultsLimit, r > 0 else { return configuration.maxResultsPerPage }
        return min(r, configuration.maxResultsPerPage)
    }

    /// Decodes a token and checks it belongs here and is within the retention window.
    private func checkToken(_ token: ChangeToken, kind: ChangeToken.Kind, owner: UInt64,
                            _ ctx: RequestContext) throws(StoreError) -> ChangeToken.Payload {
        guard let p = token.payload else {
            throw StoreError(.invalidArguments, "'\(token.rawValue.prefix(64))' is not a change token this store issued")
        }
        guard p.kind == kind, p.owner == owner else {
            throw StoreError(.invalidArguments,
                             "the change token belongs to another \(p.kind == .zone ? "zone" : "database"); "
                             + "tokens are per zone or per database")
        }
        let age = ctx.now.millisecondsSinceEpoch - p.issuedAtMs
        if age > configuration.tokenRetention.nanoseconds / 1_000_000 {
            throw StoreError(.changeTokenExpired,
                             "the change token is \(age / 1000) s old, past the retention window of "
                             + "\(configuration.tokenRetention.nanoseconds / 1_000_000_000) s: fetch again without a token")
        }
        return p
    }

    /// The change feeds are the private and shared databases' ("Fetching Record Zone Changes" and
    /// "Fetching Database Changes" list those two as the possible `database`): the public database
    /// has none, `BAD_REQUEST`.
    public static func checkHasChangeFeeds(_ scope: DatabaseScope, _ endpoint: String) throws(StoreError) {
        if scope == .public {
            throw StoreError(.invalidArguments, "\(endpoint) is not available in the public database (CloudKit "
                             + "serves it in the private and shared databases): query the public database instead")
        }
    }
}
