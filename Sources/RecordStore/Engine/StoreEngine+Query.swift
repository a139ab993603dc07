import ZoneCore

extension StoreEngine {
    /// A page of the records `query` matches, in its order: in `zoneID`, or, with `zoneWide` and
    /// no zone, in every zone of the user's private database. The shared database is queried one
    /// zone at a time (as on CloudKit, where a shared-database query names its zone).
    ///
    /// The work is one pass over the zones' records, each record checked against every filter,
    /// then a sort of the matches: linear in the records searched and bounded per record by
    /// `RecordQuery.Limits`. A page holds at most `resultsLimit` records and never more than the
    /// server's page size; `continuationMarker` resumes after it.
    public mutating func queryRecords(_ query: RecordQuery, in zoneID: ZoneID?, zoneWide: Bool = false,
                                      resultsLimit: Int? = nil, continuationMarker: String? = nil,
                                      scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> QueryPage {
        try admit(ctx, touchesZone: true)
        let (zones, matched) = try matches(query, in: zoneID, zoneWide: zoneWide, scope: scope, ctx)
        let digest = QueryCursor.digest(of: query, zones: zoneID == nil && zoneWide ? nil : zones, scope: scope,
                                        user: ctx.user)
        let start = try continuationMarker.map { m throws(StoreError) in
            try QueryCursor.decode(m, digest: digest).resume(in: matched)
        } ?? 0
        let limit = min(resultsLimit.map { max($0, 1) } ?? configuration.maxResultsPerPage,
                        configuration.maxResultsPerPage)
        let end = start + min(limit, matched.count - start)
        let page = Array(matched[start..<end])
        var marker: String?
        if end < matched.count, let last = page.last {
            marker = QueryCursor(offset: end, owner: last.id.zoneID.ownerName, zoneName: last.id.zoneID.zoneName,
                                 recordName: last.id.recordName).encode(digest: digest)
        }
        return QueryPage(records: page, continuationMarker: marker)
    }

    /// Every record `query` matches in the zones asked, sorted; and those zones.
    private func matches(_ query: RecordQuery, in zoneID: ZoneID?, zoneWide: Bool, scope: DatabaseScope,
                         _ ctx: RequestContext) throws(StoreError) -> ([ZoneID], [Record]) {
        try query.validate()
        let zones: [ZoneID]
        if let zoneID {
            zones = [try resolveZone(zoneID, scope: scope, access: .read, ctx)]
        } else if zoneWide && scope == .public {
            // The public database's one zone is the whole database.
            zones = [try resolveZone(.defaultZone, scope: scope, access: .read, ctx)]
        } else if zoneWide {
            try checkSignedIn(scope: scope, access: .read, ctx)
            guard scope == .private else {
                throw StoreError(.invalidArguments,
                                 "zoneWide: the shared database is queried one zone at a time: name its zoneID")
            }
            zones = state.zones.keys.filter { $0.ownerName == ctx.user }
                .sorted { $0.zoneName < $1.zoneName }
        } else {
            zones = [try resolveZone(.defaultZone, scope: scope, access: .read, ctx)]
        }
        let evaluator = QueryEvaluator(query)
        var matched: [Record] = []
        for zone in zones {
            // Read where the zone sits: the dictionary's getter would copy the whole zone.
            guard let slot = state.zones.index(forKey: zone) else { continue }
            // A record-share participant finds only the hierarchies shared with them.
            let grants = recordGrants(in: zone, scope: scope, ctx)
            for record in state.zones.values[slot].records.values where evaluator.matches(record) {
                if let grants, !reaches(record, in: zone, grants) { continue }
                matched.append(record)
            }
        }
        matched.sort(by: evaluator.precedes)
        return (zones, matched)
    }

    /// Records of one type in one zone whose fields equal `filters`, in record-name order (the
    /// `EQUALS` query our own clients make), all of them.
    public mutating func queryRecords(recordType: String, in zoneID: ZoneID, filters: [String: FieldValue] = [:],
                                      scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> [Record] {
        let equal = filters.sorted { $0.key < $1.key }.map { QueryFilter(.equals, $0.key, $0.value) }
        let query = RecordQuery(recordType: recordType, filters: equal)
        try admit(ctx, touchesZone: true)
        return try matches(query, in: zoneID, zoneWide: false, scope: scope, ctx).1
    }
}
