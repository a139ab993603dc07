// How each `records/modify` operation is planned: what it finds, what it checks, what it would
// change. CloudKit Web Services Reference, "Modifying Records (records/modify)" → Operation Type
// Values, and "Types and Dictionaries" → Record Dictionary and Reference Dictionary
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html,
// …/Types.html).
import ZoneCore

extension StoreEngine {
    /// One operation's planned effect, or why it fails.
    struct ItemPlan {
        /// A save or delete carries its record's key as planning made it, for applying the change
        /// (hashing a record's name costs as much as the rest of finding it).
        enum Outcome {
            case save(Record, RecordKey)
            /// A deletion, with the records it takes along through `DELETE_SELF` references and the
            /// shared roots whose hierarchy held it (`Tombstone.sharedRoots`).
            case delete(RecordID, recordType: String, RecordKey, cascaded: [CascadedDelete], sharedRoots: [String]?)
            /// The zone-wide share saved as it will stand (its change tag given when applied).
            case saveZoneShare(ZoneShare)
            /// The zone-wide share of the zone deleted.
            case deleteZoneShare(ZoneID)
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

    /// A record a deletion takes along: it referred to a deleted record with `DELETE_SELF`.
    struct CascadedDelete {
        var id: RecordID
        var recordType: String
        var key: RecordKey
        var sharedRoots: [String]? = nil
    }

    /// What the operations planned so far in a request would leave: the records they save, and
    /// nil where they delete. Later operations of the request see the store through it.
    struct PlannedChanges {
        struct Slot: Hashable {
            var zone: ZoneID
            var key: RecordKey
        }

        private(set) var records: [Slot: Record?] = [:]
        /// Zone-wide shares planned saved, and nil where planned deleted.
        private(set) var zoneShares: [ZoneID: ZoneShare?] = [:]
        /// Whether a record saved here refers to another with an action.
        private(set) var holdsReferences = false

        var isEmpty: Bool { records.isEmpty }

        mutating func note(_ plan: ItemPlan) {
            switch plan.outcome {
            case .save(let record, let key):
                records[Slot(zone: record.id.zoneID, key: key)] = .some(record)
                if !holdsReferences { ReferenceIndex.forEachTarget(of: record) { _, _ in holdsReferences = true } }
            case .delete(let id, _, let key, let cascaded, _):
                records[Slot(zone: id.zoneID, key: key)] = .some(nil)
                for doomed in cascaded { records[Slot(zone: doomed.id.zoneID, key: doomed.key)] = .some(nil) }
            case .saveZoneShare(let share):
                zoneShares[share.zoneID] = .some(share)
            case .deleteZoneShare(let zone):
                zoneShares[zone] = .some(nil)
            case .failed, .taken:
                break
            }
        }

        /// The planned version of `key` in `zone`: `.some(nil)` if planned deleted, nil if untouched.
        func planned(_ key: RecordKey, in zone: ZoneID) -> Record?? {
            records.isEmpty ? nil : records[Slot(zone: zone, key: key)]
        }
    }

    /// `key`'s record in `zone` as the operations planned so far would leave it.
    func current(_ key: RecordKey, in zone: ZoneID, _ planned: PlannedChanges) -> Record? {
        if let version = planned.planned(key, in: zone) { return version }
        return state.zones[zone]?.records[key]
    }

    func plan(_ operation: RecordOperation, scope: DatabaseScope, recordsFit: Bool, _ planned: PlannedChanges,
              _ ctx: RequestContext) -> ItemPlan {
        switch operation {
        case .create(let r), .replace(let r), .forceReplace(let r):
            if r.id.recordName == ZoneShare.recordName {
                return planZoneShareSave(operation.kind, r, scope: scope, planned, ctx)
            }
            return planSave(operation.kind, r, removing: [], scope: scope, recordsFit: recordsFit, planned, ctx)
        case .update(let r, let removing), .forceUpdate(let r, let removing):
            if r.id.recordName == ZoneShare.recordName {
                return planZoneShareSave(operation.kind, r, removing: removing, scope: scope, planned, ctx)
            }
            return planSave(operation.kind, r, removing: removing, scope: scope, recordsFit: recordsFit, planned, ctx)
        case .delete(let id, let tag):
            if id.recordName == ZoneShare.recordName {
                return planZoneShareDelete(id, tag: tag, scope: scope, planned, ctx)
            }
            return planDelete(id, tag: tag, scope: scope, planned, ctx)
        case .forceDelete(let id):
            if id.recordName == ZoneShare.recordName {
                return planZoneShareDelete(id, tag: nil, scope: scope, planned, ctx)
            }
            return planDelete(id, tag: nil, scope: scope, planned, ctx)
        }
    }

    /// `recordsFit`: the request's whole data fits in one record's limit (so this record does).
    private func planSave(_ kind: RecordOperation.Kind, _ sent: Record, removing: [String], scope: DatabaseScope,
                          recordsFit: Bool, _ planned: PlannedChanges, _ ctx: RequestContext) -> ItemPlan {
        // A failed item reports its ID as given, with its zone once that has resolved.
        var id = sent.id
        var zone: ZoneID?
        do throws(StoreError) {
            if let problem = NameRules.recordNameProblem(sent.id.recordName) {
                throw StoreError(.invalidArguments, problem)
            }
            if !sent.recordType.isEmpty, let problem = NameRules.recordTypeProblem(sent.recordType) {
                throw StoreError(.invalidArguments, problem)
            }
            let resolved = try resolveZone(sent.id.zoneID, scope: scope, access: .write, ctx)
            zone = resolved
            id = RecordID(recordName: sent.id.recordName, zoneID: resolved)
            let structured = sent.fields.holdsStructuredValues
            if structured {
                for (name, value) in sent.fields {
                    if let problem = value.problem(field: name) { throw StoreError(.invalidArguments, problem) }
                }
            }
            if !recordsFit {
                let size = sent.fieldDataSize
                if size > configuration.maxRecordBytes {
                    throw StoreError(.limitExceeded,
                                     "record \(sent.id.recordName) holds \(size) bytes of fields; "
                                     + "the limit is \(configuration.maxRecordBytes)")
                }
            }
            let key = RecordKey(sent.id.recordName)
            let existing = current(key, in: resolved, planned)
            let stamp = RecordStamp(timestamp: ctx.now.millisecondsSinceEpoch, userRecordName: ctx.user,
                                    deviceID: ctx.deviceID.flatMap { $0.isEmpty ? nil : $0 })
            var saved = sent
            saved.id = id
            saved.modified = stamp
            if let existing {
                try Self.checkCreator(of: existing, scope: scope, ctx)
                if kind == .create {
                    throw StoreError(.serverRecordChanged, "record \(sent.id.recordName) already exists",
                                     serverRecord: existing)
                }
                if !sent.recordType.isEmpty, existing.recordType != sent.recordType {
                    throw StoreError(.invalidArguments, "record \(sent.id.recordName) is a \(existing.recordType), "
                                     + "not a \(sent.recordType)")
                }
                if kind.checksTag { try Self.checkTag(sent.recordChangeTag, of: existing, kind) }
                saved.recordType = existing.recordType
                saved.created = existing.created
                // The share is the server's to set (sharing), whatever a save sends; a short GUID,
                // once made, stays the record's (a save asking for one again gets the same).
                saved.share = existing.share
                saved.shortGUID = existing.shortGUID ?? sent.shortGUID
                if kind == .update || kind == .forceUpdate {
                    saved.fields = existing.fields.merging(sent.fields)
                    for name in removing { saved.fields[name] = nil }
                    if saved.parent == nil { saved.parent = existing.parent }
                    try checkMergedSize(saved, sent: sent, existing: existing)
                }
            } else {
                if kind.needsExisting {
                    throw sent.recordChangeTag.map { tag in
                        StoreError(.unknownItem,
                                   "record \(sent.id.recordName) (tag \(tag)) does not exist on the server")
                    } ?? Self.missing(sent.id.recordName, in: resolved)
                }
                if sent.recordType.isEmpty {
                    throw StoreError(.invalidArguments, "record \(sent.id.recordName) does not exist: "
                                     + "its recordType is needed to create it")
                }
                saved.created = stamp
                saved.share = nil
            }
            if saved.recordType == RecordShare.recordType && sent.id.recordName != ZoneShare.recordName {
                try planRecordShare(&saved, existing: existing, scope: scope, zone: resolved, planned, ctx)
            } else if let grants = recordGrants(in: resolved, scope: scope, ctx) {
                try checkHierarchyWrite(saved, existing: existing, in: resolved, grants, planned)
            }
            if structured, saved.fields.mayHoldReferences {
                try checkReferences(&saved, key: key, in: resolved, planned)
            }
            return ItemPlan(id: id, zone: zone, outcome: .save(saved, key))
        } catch {
            return ItemPlan(id: id, zone: zone, outcome: .failed(error))
        }
    }

    /// `update` and `replace` name the version they change by its tag; `delete` may.
    private static func checkTag(_ tag: String?, of existing: Record, _ kind: RecordOperation.Kind) throws(StoreError) {
        guard let tag else {
            if kind == .delete { return }
            throw StoreError(.invalidArguments,
                             "\(kind.rawValue) of record \(existing.id.recordName) needs its recordChangeTag "
                             + "(forceUpdate and forceReplace do not)")
        }
        guard tag == existing.recordChangeTag else {
            throw StoreError(.serverRecordChanged,
                             "record \(existing.id.recordName) changed on the server (tag "
                             + "\(existing.recordChangeTag ?? "-"), yours \(tag))", serverRecord: existing)
        }
    }

    /// An update's merged fields are held to the record limit too (sent and kept fields together).
    private func checkMergedSize(_ merged: Record, sent: Record, existing: Record) throws(StoreError) {
        let limit = configuration.maxRecordBytes
        guard existing.fieldDataSize + sent.fieldDataSize > limit else { return }
        let size = merged.fieldDataSize
        if size > limit {
            throw StoreError(.limitExceeded, "record \(sent.id.recordName) would hold \(size) bytes of fields "
                             + "with the update; the limit is \(limit)")
        }
    }

    private func planDelete(_ given: RecordID, tag: String?, scope: DatabaseScope, _ planned: PlannedChanges,
                            _ ctx: RequestContext) -> ItemPlan {
        var id = given
        var zone: ZoneID?
        do throws(StoreError) {
            let resolved = try resolveZone(given.zoneID, scope: scope, access: .write, ctx)
            zone = resolved
            id = RecordID(recordName: given.recordName, zoneID: resolved)
            let key = RecordKey(given.recordName)
            guard let existing = current(key, in: resolved, planned) else {
                throw Self.missing(given.recordName, in: resolved)
            }
            try Self.checkCreator(of: existing, scope: scope, ctx)
            if let grants = recordGrants(in: resolved, scope: scope, ctx) {
                try checkHierarchyDelete(given.recordName, in: resolved, grants, planned)
            } else if scope == .shared && RecordShare.isRecordShare(existing) {
                throw StoreError(.permissionFailure, "only the owner deletes a share, in the private database")
            }
            if tag != nil { try Self.checkTag(tag, of: existing, .delete) }
            var cascaded = try cascade(from: key, in: resolved, planned)
            for i in cascaded.indices {
                cascaded[i].sharedRoots = sharedRoots(of: cascaded[i].key.name, in: resolved, planned)
            }
            return ItemPlan(id: id, zone: zone,
                            outcome: .delete(id, recordType: existing.recordType, key, cascaded: cascaded,
                                             sharedRoots: sharedRoots(of: given.recordName, in: resolved, planned)))
        } catch {
            return ItemPlan(id: id, zone: zone, outcome: .failed(error))
        }
    }
}
