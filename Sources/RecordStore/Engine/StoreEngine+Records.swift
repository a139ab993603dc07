import ZoneCore

extension StoreEngine {
    /// Saves and deletes records (CloudKit's `CKModifyRecordsOperation`).
    ///
    /// Request-wide problems (more than 400 items, more than 2 MB, an item named twice) throw;
    /// everything else is reported per item, as CloudKit's partial failures are.
    public mutating func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope,
                                       _ ctx: RequestContext) throws(StoreError) -> ModifyRecordsResult {
        try admit(ctx, touchesZone: true)
        let items = request.saves.count + request.deletes.count
        if items > configuration.maxItemsPerRequest {
            throw StoreError(.limitExceeded,
                             "\(items) items in one request; the limit is \(configuration.maxItemsPerRequest): split it")
        }
        let size = request.dataSize
        if size > configuration.maxRequestBytes {
            throw StoreError(.limitExceeded,
                             "request carries \(size) bytes; the limit is \(configuration.maxRequestBytes): split it")
        }
        try checkNamedOnce(request, scope: scope, ctx)

        // Plan every item against the current state; nothing is applied yet. Items are read where
        // they sit in the request (iterating would copy each record).
        var plans: [ItemPlan] = []
        plans.reserveCapacity(items)
        // A request whose data fits in one record's limit cannot hold a record past it: its records'
        // sizes, counted in the request's, need not be counted again one by one.
        let recordsFit = size <= configuration.maxRecordBytes
        for i in request.saves.indices {
            plans.append(planSave(request.saves[i], policy: request.savePolicy, scope: scope,
                                  recordsFit: recordsFit, ctx))
        }
        for i in request.deletes.indices { plans.append(planDelete(request.deletes[i], scope: scope, ctx)) }

        // Atomic batches fail whole per custom zone.
        if request.atomic {
            var failedZones = Set<ZoneID>()
            for plan in plans where plan.error != nil {
                if let zone = plan.zone, !zone.isDefaultZone { failedZones.insert(zone) }
            }
            for i in plans.indices where plans[i].error == nil {
                if let zone = plans[i].zone, failedZones.contains(zone) {
                    plans[i].outcome = .failed(StoreError(
                        .batchRequestFailed, "not applied: another item of this atomic batch in zone \(zone) failed"))
                }
            }
        }

        var results: [RecordResult] = []
        results.reserveCapacity(plans.count)
        // The zones changed, in the order first changed, with the record types changed in each (each
        // once; a request changes few, so a list searched costs less than a set built and hashed). A
        // request names at most `maxItemsPerRequest` items, so a search through them is bounded.
        var changed: [(zone: ZoneID, types: [String])] = []
        func note(_ zone: ZoneID, _ type: String) {
            if let at = changed.firstIndex(where: { $0.zone == zone }) {
                if !changed[at].types.contains(type) { changed[at].types.append(type) }
            } else {
                changed.append((zone, [type]))
            }
        }
        for i in plans.indices {
            // Taken out of its plan, the record is held alone: setting its tag changes it in place
            // instead of copying it.
            switch plans[i].takeOutcome() {
            case .failed(let error):
                results.append(.failed(plans[i].id, error))
            case .save(var record, let key):
                record.recordChangeTag = newChangeTag()
                commit(.putRecord(record), recordKey: key)
                note(record.id.zoneID, record.recordType)
                results.append(.saved(record))
            case .delete(let id, let type, let key):
                commit(.deleteRecord(id, recordType: type, atMs: ctx.now.millisecondsSinceEpoch), recordKey: key)
                results.append(.deleted(id))
                note(id.zoneID, type)
            case .taken:
                preconditionFailure("a plan's outcome is taken once")
            }
        }
        for (zone, types) in changed { notifyZoneChanged(zone, recordTypes: types, ctx) }
        return ModifyRecordsResult(results: results)
    }

    /// Throws when one record is named twice in `request` (owner resolved as the scope resolves it).
    private func checkNamedOnce(_ request: ModifyRecordsRequest, scope: DatabaseScope,
                                _ ctx: RequestContext) throws(StoreError) {
        let ids = request.saves.count + request.deletes.count
        guard ids > 1 else { return }
        func resolved(_ id: RecordID) -> RecordID {
            RecordID(recordName: id.recordName,
                     zoneID: scope == .private ? id.zoneID.resolvingOwner(ctx.user) : id.zoneID)
        }
        func repeated(_ id: RecordID) -> StoreError {
            StoreError(.invalidArguments, "record \(id) appears more than once in one request")
        }
        let all = request.saves.lazy.map(\.id) + request.deletes
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
                return .found(record)
            } catch {
                return .failed(id, error)
            }
        }
    }

    /// Records of one type in one zone whose fields equal `filters` (private database only:
    /// the shared database does not support zone-wide queries, as on CloudKit).
    public mutating func queryRecords(recordType: String, in zoneID: ZoneID, filters: [String: FieldValue] = [:],
                                      scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> [Record] {
        try admit(ctx, touchesZone: true)
        guard scope == .private else {
            throw StoreError(.invalidArguments,
                             "queries are not supported on the shared database: fetch by record name or zone changes")
        }
        let zone = try resolveZone(zoneID, scope: scope, access: .read, ctx)
        let records = state.zones[zone].map { Array($0.records.values) } ?? []
        return records
            .filter { r in r.recordType == recordType && r.fields.holds(filters) }
            .sorted { $0.id.recordName < $1.id.recordName }
    }

    // MARK: Planning

    struct ItemPlan {
        /// A save or delete carries its record's key as planning made it, for applying the change
        /// (hashing a record's name costs as much as the rest of finding it).
        enum Outcome {
            case save(Record, RecordKey)
            case delete(RecordID, recordType: String, RecordKey)
            case failed(StoreError)
            /// Handed to the commit loop (`takeOutcome`).
            case taken
        }

        var id: RecordID
        var zone: ZoneID?
        var outcome: Outcome

        var error: StoreError? { if case .failed(let e) = outcome { return e } else { return nil } }

        /// The outcome, leaving `.taken` in its place so that the caller holds it alone.
        mutating func takeOutcome() -> Outcome {
            let taken = outcome
            outcome = .taken
            return taken
        }
    }

    /// `recordsFit`: the request's whole data fits in one record's limit (so this record does).
    private func planSave(_ record: Record, policy: SavePolicy, scope: DatabaseScope, recordsFit: Bool,
                          _ ctx: RequestContext) -> ItemPlan {
        // A failed item reports its ID as given, with its zone once that has resolved.
        var id = record.id
        var zone: ZoneID?
        do throws(StoreError) {
            if let problem = NameRules.recordNameProblem(record.id.recordName) {
                throw StoreError(.invalidArguments, problem)
            }
            if let problem = NameRules.recordTypeProblem(record.recordType) {
                throw StoreError(.invalidArguments, problem)
            }
            let resolved = try resolveZone(record.id.zoneID, scope: scope, access: .write, ctx)
            zone = resolved
            id = RecordID(recordName: record.id.recordName, zoneID: resolved)
            if !recordsFit {
                let size = record.fieldDataSize
                if size > configuration.maxRecordBytes {
                    throw StoreError(.limitExceeded,
                                     "record \(record.id.recordName) holds \(size) bytes of fields; "
                                     + "the limit is \(configuration.maxRecordBytes)")
                }
            }
            let stamp = RecordStamp(timestamp: ctx.now.millisecondsSinceEpoch, userRecordName: ctx.user)
            let key = RecordKey(record.id.recordName)
            let existing = state.zones[resolved]?.records[key]
            var saved = record
            saved.id = id
            saved.modified = stamp
            if let existing {
                if existing.recordType != record.recordType {
                    throw StoreError(.invalidArguments,
                                     "record \(record.id.recordName) is a \(existing.recordType), "
                                     + "not a \(record.recordType)")
                }
                switch policy {
                case .ifServerRecordUnchanged:
                    guard record.recordChangeTag == existing.recordChangeTag else {
                        let why = record.recordChangeTag == nil
                            ? "record \(record.id.recordName) already exists"
                            : "record \(record.id.recordName) changed on the server (tag \(existing.recordChangeTag ?? "-")"
                                + ", yours \(record.recordChangeTag!))"
                        throw StoreError(.serverRecordChanged, why, serverRecord: existing)
                    }
                case .changedKeys:
                    saved.fields = existing.fields.merging(record.fields)
                case .allKeys:
                    break
                }
                saved.created = existing.created
            } else {
                if policy == .ifServerRecordUnchanged, let tag = record.recordChangeTag {
                    throw StoreError(.unknownItem,
                                     "record \(record.id.recordName) (tag \(tag)) no longer exists on the server")
                }
                saved.created = stamp
            }
            return ItemPlan(id: id, zone: zone, outcome: .save(saved, key))
        } catch {
            return ItemPlan(id: id, zone: zone, outcome: .failed(error))
        }
    }

    private func planDelete(_ given: RecordID, scope: DatabaseScope, _ ctx: RequestContext) -> ItemPlan {
        var id = given
        var zone: ZoneID?
        do throws(StoreError) {
            let resolved = try resolveZone(given.zoneID, scope: scope, access: .write, ctx)
            zone = resolved
            id = RecordID(recordName: given.recordName, zoneID: resolved)
            let key = RecordKey(given.recordName)
            guard let existing = state.zones[resolved]?.records[key] else {
                throw Self.missing(given.recordName, in: resolved)
            }
            return ItemPlan(id: id, zone: zone, outcome: .delete(id, recordType: existing.recordType, key))
        } catch {
            return ItemPlan(id: id, zone: zone, outcome: .failed(error))
        }
    }

    /// `unknownItem` for the record `name` missing from `zone`: "record NAME does not exist in ZONE".
    /// Copied piece by piece into one string made to its length (a lookup of a record not yet
    /// written is routine: interpolation grew its string piece by piece, and even appending to a
    /// string sized beforehand checked and re-measured it at each of the six pieces).
    private static func missing(_ name: String, in zone: ZoneID) -> StoreError {
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
