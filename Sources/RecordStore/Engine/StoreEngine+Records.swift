import ZoneCore

extension StoreEngine {
    /// Applies a `records/modify` request (CloudKit Web Services Reference, "Modifying Records
    /// (records/modify)",
    /// developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html).
    ///
    /// Operations are planned in order, each against the store as the ones before it left it;
    /// then, in an atomic request, a failure in a custom zone fails the zone's other operations
    /// (`batchRequestFailed`); then what remains is applied. Request-wide problems (more operations
    /// or bytes than the Data Size Limits allow, a record named twice) throw and apply nothing;
    /// everything else is reported per operation, as CloudKit's partial failures are.
    public mutating func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope,
                                       _ ctx: RequestContext) throws(StoreError) -> ModifyRecordsResult {
        try admit(ctx, touchesZone: true)
        let items = request.operations.count
        if items > configuration.maxItemsPerRequest {
            throw StoreError(.limitExceeded, "\(items) operations in one request; the limit is "
                             + "\(configuration.maxItemsPerRequest): split it")
        }
        let size = request.dataSize
        if size > configuration.maxRequestBytes {
            throw StoreError(.limitExceeded,
                             "request carries \(size) bytes; the limit is \(configuration.maxRequestBytes): split it")
        }
        try checkNamedOnce(request, scope: scope, ctx)

        // Plan every operation; nothing is applied yet. A single operation needs no record of what
        // earlier ones did. Operations are read where they sit (iterating would copy each record).
        var planned = PlannedChanges()
        var plans: [ItemPlan] = []
        plans.reserveCapacity(items)
        // A request whose data fits in one record's limit cannot hold a record past it: its records'
        // sizes, counted in the request's, need not be counted again one by one.
        let recordsFit = size <= configuration.maxRecordBytes
        for i in request.operations.indices {
            let plan = self.plan(request.operations[i], scope: scope, recordsFit: recordsFit, planned, ctx)
            if items > 1 { planned.note(plan) }
            plans.append(plan)
        }

        // Atomic batches fail whole per custom zone (the default zone is never atomic).
        if request.atomic {
            var failedZones = Set<ZoneID>()
            for plan in plans where plan.error != nil {
                if let zone = plan.zone, !zone.isDefaultZone { failedZones.insert(zone) }
            }
            if !failedZones.isEmpty {
                for i in plans.indices where plans[i].error == nil {
                    if let zone = plans[i].zone, failedZones.contains(zone) {
                        plans[i].outcome = .failed(StoreError(.batchRequestFailed, "not applied: another operation "
                                                              + "of this atomic request in zone \(zone) failed"))
                    }
                }
            }
        }

        var results: [RecordResult] = []
        results.reserveCapacity(plans.count)
        // The zones changed, in the order first changed, with the record types changed in each (each
        // once; a request changes few, so a list searched costs less than a set built and hashed). A
        // request names at most `maxItemsPerRequest` operations, so a search through them is bounded
        // (a cascade adds the types of the records it deletes).
        var changed: [(zone: ZoneID, types: [String])] = []
        func note(_ zone: ZoneID, _ type: String) {
            if let at = changed.firstIndex(where: { $0.zone == zone }) {
                if !changed[at].types.contains(type) { changed[at].types.append(type) }
            } else {
                changed.append((zone, [type]))
            }
        }
        // Zones whose owner watches them by query subscription, asked once per zone; their records'
        // changes are kept with what they were before, for notifyQuerySubscriptions.
        var watched: [(zone: ZoneID, byQuery: Bool)] = []
        var events: [RecordEvent] = []
        // Record shares saved and deleted, and shared roots deleted, for their roots' `share`.
        var sharesSaved: [(zone: ZoneID, share: String, root: String)] = []
        var sharesDeleted: [(zone: ZoneID, root: String)] = []
        var rootsDeleted: [(zone: ZoneID, share: String)] = []
        func isWatched(_ zone: ZoneID) -> Bool {
            if let known = watched.first(where: { $0.zone == zone }) { return known.byQuery }
            let byQuery = watchedByQuery(zone)
            watched.append((zone, byQuery))
            return byQuery
        }
        for i in plans.indices {
            // Taken out of its plan, the record is held alone: setting its tag changes it in place
            // instead of copying it.
            switch plans[i].takeOutcome() {
            case .failed(let error):
                results.append(.failed(plans[i].id, error))
            case .save(var record, let key):
                record.recordChangeTag = newChangeTag()
                let zone = record.id.zoneID
                let before = isWatched(zone) ? stored(key, in: zone) : nil
                commit(.putRecord(record), recordKey: key)
                note(zone, record.recordType)
                if let root = RecordShare.share(in: record)?.rootRecordName {
                    sharesSaved.append((zone, record.id.recordName, root))
                }
                if isWatched(zone) {
                    events.append(RecordEvent(zone: zone, recordName: record.id.recordName, before: before,
                                              after: record))
                }
                results.append(.saved(record))
            case .delete(let id, let type, let key, let cascaded, let sharedRoots):
                let atMs = ctx.now.millisecondsSinceEpoch
                func deleted(_ id: RecordID, _ key: RecordKey) {
                    guard isWatched(id.zoneID) else { return }
                    events.append(RecordEvent(zone: id.zoneID, recordName: id.recordName,
                                              before: stored(key, in: id.zoneID), after: nil))
                }
                deleted(id, key)
                if let gone = stored(key, in: id.zoneID) {
                    if let root = RecordShare.share(in: gone)?.rootRecordName { sharesDeleted.append((id.zoneID, root)) }
                    if let share = gone.share { rootsDeleted.append((id.zoneID, share)) }
                }
                commit(.deleteRecord(id, recordType: type, atMs: atMs, sharedRoots: sharedRoots), recordKey: key)
                note(id.zoneID, type)
                for doomed in cascaded {
                    deleted(doomed.id, doomed.key)
                    commit(.deleteRecord(doomed.id, recordType: doomed.recordType, atMs: atMs,
                                         sharedRoots: doomed.sharedRoots), recordKey: doomed.key)
                    note(doomed.id.zoneID, doomed.recordType)
                }
                results.append(.deleted(id))
            case .saveZoneShare(var share):
                share.changeTag = newChangeTag()
                commit(.putShare(share))
                results.append(.saved(RecordShare.record(of: share)))
            case .deleteZoneShare(let zone):
                commit(.deleteShare(zone))
                results.append(.deleted(RecordID(recordName: ZoneShare.recordName, zoneID: zone)))
            case .taken:
                preconditionFailure("a plan's outcome is taken once")
            }
        }
        if !sharesSaved.isEmpty || !sharesDeleted.isEmpty || !rootsDeleted.isEmpty {
            let roots = syncRecordShareRoots(saved: sharesSaved, deletedShares: sharesDeleted,
                                             deletedRoots: rootsDeleted, ctx)
            for i in results.indices {
                if case .saved(let record) = results[i], let now = roots[record.id] { results[i] = .saved(now) }
            }
        }
        for (zone, types) in changed { notifyZoneChanged(zone, recordTypes: types, ctx) }
        notifyQuerySubscriptions(events, ctx)
        return ModifyRecordsResult(results: results)
    }

    /// Throws when one record is named twice in `request` (owner resolved as the scope resolves
    /// it): "One operation per record is allowed".
    private func checkNamedOnce(_ request: ModifyRecordsRequest, scope: DatabaseScope,
                                _ ctx: RequestContext) throws(StoreError) {
        let ids = request.operations.count
        guard ids > 1 else { return }
        func resolved(_ id: RecordID) -> RecordID {
            switch scope {
            case .private: return RecordID(recordName: id.recordName, zoneID: id.zoneID.resolvingOwner(ctx.user))
            case .shared: return id
            case .public:
                return id.zoneID.isDefaultZone && id.zoneID.ownerName.isEmpty
                    ? RecordID(recordName: id.recordName, zoneID: .publicZone) : id
            }
        }
        func repeated(_ id: RecordID) -> StoreError {
            StoreError(.invalidArguments, "record \(id) appears more than once in one request")
        }
        let all = request.operations.lazy.map(\.recordID)
        // A few items compare pairwise (hashing each ID's three strings costs more); many go through a set.
        if ids <= 8 {
            var earlier: [RecordID] = []
            earlier.reserveCapacity(ids)
            for id in all {
                let r = resolved(id)
                if earlier.contains(r) { throw repeated(id) }
                earlier.append(r)
            }
            return
        }
        var seen = Set<RecordID>()
        for id in all where !seen.insert(resolved(id)).inserted { throw repeated(id) }
    }

    /// Fetches records by ID; a missing one is `unknownItem` for that item alone.
    public mutating func lookupRecords(_ ids: [RecordID], scope: DatabaseScope,
                                       _ ctx: RequestContext) throws(StoreError) -> [LookupResult] {
        try admit(ctx, touchesZone: true)
        if ids.count > configuration.maxItemsPerRequest {
            throw StoreError(.limitExceeded,
                             "\(ids.count) records in one lookup; the limit is \(configuration.maxItemsPerRequest)")
        }
        return ids.map { id in
            do throws(StoreError) {
                let zone = try resolveZone(id.zoneID, scope: scope, access: .read, ctx)
                // Read where the zone sits: the dictionary's getter would copy the whole zone.
                guard let slot = state.zones.index(forKey: zone),
                      let record = state.zones.values[slot].records[RecordKey(id.recordName)] else {
                    return .failed(id, Self.missing(id.recordName, in: zone))
                }
                // A record-share participant finds only the hierarchies shared with them.
                if let grants = recordGrants(in: zone, scope: scope, ctx), !reaches(record, in: zone, grants) {
                    return .failed(id, Self.missing(id.recordName, in: zone))
                }
                return .found(record)
            } catch {
                return .failed(id, error)
            }
        }
    }
}

extension StoreEngine {
    /// `unknownItem` for the record `name` missing from `zone`: "record NAME does not exist in ZONE".
    /// Copied piece by piece into one string made to its length (a lookup of a record not yet
    /// written is routine: interpolation grew its string piece by piece, and even appending to a
    /// string sized beforehand checked and re-measured it at each of the six pieces).
    static func missing(_ name: String, in zone: ZoneID) -> StoreError {
        let head = "record ", middle = " does not exist in ", at = "@"
        let owner = zone.ownerName
        var length = head.utf8.count + name.utf8.count + middle.utf8.count + zone.zoneName.utf8.count
        if !owner.isEmpty { length += at.utf8.count + owner.utf8.count }
        let message = String(unsafeUninitializedCapacity: length) { out in
            var written = 0
            // Copied from where each piece's bytes lie; byte by byte only if they lie nowhere contiguous.
            func put(_ text: String) {
                let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
                    if let from = bytes.baseAddress, let to = out.baseAddress {
                        (to + written).initialize(from: from, count: bytes.count)
                    }
                    return bytes.count
                }
                if let copied {
                    written += copied
                    return
                }
                for byte in text.utf8 {
                    out[written] = byte
                    written += 1
                }
            }
            put(head)
            put(name)
            put(middle)
            put(zone.zoneName)
            if !owner.isEmpty {
                put(at)
                put(owner)
            }
            return written
        }
        return StoreError(.unknownItem, message)
    }
}
