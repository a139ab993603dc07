// What references with an action do (CloudKit Web Services Reference, "Types and Dictionaries" →
// Reference Dictionary,
// developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
// `DELETE_SELF` — deleting the target deletes the referring record, and so on down a chain;
// `VALIDATE` — the target must exist when the reference is saved, and cannot be deleted while the
// reference stands. Data Size Limits: at most 750 `DELETE_SELF` references to one target.
// Operations see each other in request order: create a target before a record that validates it,
// delete the referring records before a target they validate.
import ZoneCore

extension StoreEngine {
    /// Data Size Limits: "Maximum number of source references to a single target where the action
    /// is delete self: 750".
    static let maxDeleteSelfReferrers = 750

    /// Checks the references with an action in `record` (saved under `key` in `zone`): each names
    /// a record of the zone (a reference's zone without an owner gets the zone's), a `VALIDATE`
    /// target exists, a `DELETE_SELF` target has room for one more.
    func checkReferences(_ record: inout Record, key: RecordKey, in zone: ZoneID,
                         _ planned: PlannedChanges) throws(StoreError) {
        var rewritten: [(String, FieldValue)] = []
        for (name, value) in record.fields {
            var problem: StoreError?
            var changed = false
            let resolved = value.mappingReferences { reference in
                guard reference.hasAction, problem == nil else { return reference }
                let target = reference.recordID.zoneID
                guard target.zoneName == zone.zoneName, target.ownerName.isEmpty || target.ownerName == zone.ownerName
                else {
                    problem = StoreError(.invalidArguments,
                                         "field \(name): a \(reference.action.rawValue) reference names a record "
                                         + "of its own zone \(zone), not of \(target)")
                    return reference
                }
                var local = reference
                if target != zone {
                    local.recordID.zoneID = zone
                    changed = true
                }
                problem = checkTarget(local, field: name, source: key, in: zone, planned)
                return local
            }
            if let problem { throw problem }
            if changed { rewritten.append((name, resolved)) }
        }
        for (name, value) in rewritten { record.fields[name] = value }
    }

    private func checkTarget(_ reference: Reference, field: String, source: RecordKey, in zone: ZoneID,
                             _ planned: PlannedChanges) -> StoreError? {
        let target = RecordKey(reference.recordID.recordName)
        switch reference.action {
        case .none:
            return nil
        case .validate:
            if target == source || current(target, in: zone, planned) != nil { return nil }
            return StoreError(.referenceViolation,
                              "field \(field): the VALIDATE reference names record \(target.name), which does not "
                              + "exist in zone \(zone) (save it first)")
        case .deleteSelf:
            var others = 0
            for (referrer, actions) in referrers(of: target, in: zone, planned)
            where referrer != source && actions.contains(.deleteSelf) {
                others += 1
            }
            if others >= Self.maxDeleteSelfReferrers {
                return StoreError(.limitExceeded,
                                  "field \(field): record \(target.name) already has \(others) DELETE_SELF references; "
                                  + "the limit is \(Self.maxDeleteSelfReferrers)")
            }
            return nil
        }
    }

    /// The records a deletion of `target` in `zone` takes along (`DELETE_SELF`, down the chain),
    /// or `referenceViolation` when a record that stays refers to one of them with `VALIDATE`.
    func cascade(from target: RecordKey, in zone: ZoneID,
                 _ planned: PlannedChanges) throws(StoreError) -> [CascadedDelete] {
        // Most zones hold no references with an action, and most requests save none.
        if planned.holdsReferences || state.zones[zone]?.references.isEmpty == false {
            return try cascadeThroughReferences(from: target, in: zone, planned)
        }
        return []
    }

    private func cascadeThroughReferences(from target: RecordKey, in zone: ZoneID,
                                          _ planned: PlannedChanges) throws(StoreError) -> [CascadedDelete] {
        var doomed: [RecordKey] = [target]
        var gone: Set<RecordKey> = [target]
        var cascaded: [CascadedDelete] = []
        var next = 0
        while next < doomed.count {
            let deleted = doomed[next]
            next += 1
            // Sorted: the order deletions are applied (and journalled) in must not depend on hashing.
            let found = referrers(of: deleted, in: zone, planned).sorted { $0.key.name < $1.key.name }
            for (referrer, actions) in found
            where actions.contains(.deleteSelf) && gone.insert(referrer).inserted {
                guard let record = current(referrer, in: zone, planned) else { continue }
                doomed.append(referrer)
                cascaded.append(CascadedDelete(id: RecordID(recordName: referrer.name, zoneID: zone),
                                               recordType: record.recordType, key: referrer))
            }
        }
        for deleted in doomed {
            for (referrer, actions) in referrers(of: deleted, in: zone, planned)
            where actions.contains(.validate) && !gone.contains(referrer) {
                throw StoreError(.referenceViolation,
                                 "record \(deleted.name) cannot be deleted: record \(referrer.name) refers to it with "
                                 + "VALIDATE (delete that one first)")
            }
        }
        return cascaded
    }

    /// The records referring to `target` in `zone` with an action, as the operations planned so
    /// far would leave them.
    func referrers(of target: RecordKey, in zone: ZoneID,
                   _ planned: PlannedChanges) -> [RecordKey: ReferenceIndex.Actions] {
        var found = state.zones[zone]?.references.referrers(of: target) ?? [:]
        guard !planned.isEmpty else { return found }
        for (slot, version) in planned.records where slot.zone == zone {
            found[slot.key] = nil
            guard let record = version else { continue }
            ReferenceIndex.forEachTarget(of: record) { referred, actions in
                if referred == target { found[slot.key, default: []].formUnion(actions) }
            }
        }
        return found
    }
}

extension FieldValue {
    /// This value with `transform` applied to each reference in it (a list's items included).
    func mappingReferences(_ transform: (Reference) -> Reference) -> FieldValue {
        switch self {
        case .reference(let r): return .reference(transform(r))
        case .list(let items) where items.contains(where: { $0.referenceValue != nil }):
            return .list(items.map { $0.mappingReferences(transform) })
        default: return self
        }
    }
}
