// Record shares as CloudKit models them: a `cloudkit.share` record made for a root record, which
// shares that record and every record below it by `parent` (CloudKit Web Services Reference,
// "Types and Dictionaries" → Record Dictionary: `parent`, `share`, Share Request Keys; the CloudKit
// framework's CKShare: "CloudKit infers the shared hierarchy using only the parent property").
// The share is a record (RecordShare.swift); this file plans its saves, keeps the root's `share`
// in step, and limits a participant who reached the zone through record shares to the
// hierarchies they were given.
import ZoneCore

extension StoreEngine {
    /// How far up a `parent` chain the store looks for a shared root. Parents need not exist and
    /// may loop, so the walk is bounded; a record deeper than this below its root is not reached.
    static let maxHierarchyDepth = 256

    /// The roots a record-share participant may reach in `zone` with their permission, or nil when
    /// the request is not limited to hierarchies (the private or public database, or a user who
    /// reaches the whole zone through its zone-wide share).
    func recordGrants(in zone: ZoneID, scope: DatabaseScope, _ ctx: RequestContext) -> [String: SharePermission]? {
        guard scope == .shared, let slot = state.zones.index(forKey: zone) else { return nil }
        // Read where the zone sits (a copy of the zone would retain all it holds).
        if state.zones.values[slot].acceptedPermissions[ctx.user] != nil { return nil }
        return state.zones.values[slot].recordGrants[ctx.user] ?? [:]
    }

    /// The permission `grants` give over the record `name`: the grant of the nearest shared root
    /// at or above it by `parent`, as the operations planned so far leave the records.
    func hierarchyPermission(of name: String, in zone: ZoneID, _ grants: [String: SharePermission],
                             _ planned: PlannedChanges = PlannedChanges()) -> SharePermission? {
        var current = name
        for _ in 0..<Self.maxHierarchyDepth {
            if let p = grants[current] { return p }
            guard let record = self.current(RecordKey(current), in: zone, planned), let parent = record.parent else {
                return nil
            }
            current = parent
        }
        return nil
    }

    /// Whether a participant limited to `grants` sees `record`: a record of a shared hierarchy,
    /// or the share record of one of its roots.
    func reaches(_ record: Record, in zone: ZoneID, _ grants: [String: SharePermission]) -> Bool {
        if RecordShare.isRecordShare(record) {
            return RecordShare.share(in: record)?.rootRecordName.map { grants[$0] != nil } ?? false
        }
        return hierarchyPermission(of: record.id.recordName, in: zone, grants) != nil
    }

    /// The roots of record shares whose hierarchy holds the record `name` as the request leaves it
    /// (itself when it is one; a share record's root), for its tombstone: nil when the zone has no
    /// record share. A record the request deletes is walked through as stored, so a deletion found
    /// after its parent's in one request still finds the roots above them.
    func sharedRoots(of name: String, in zone: ZoneID, _ planned: PlannedChanges) -> [String]? {
        guard let slot = state.zones.index(forKey: zone), !state.zones.values[slot].sharedRootNames.isEmpty else {
            return nil
        }
        let roots = state.zones.values[slot].sharedRootNames
        var found: [String] = []
        var current = name
        for _ in 0..<Self.maxHierarchyDepth {
            if roots.contains(current), !found.contains(current) { found.append(current) }
            let key = RecordKey(current)
            guard let record = planned.planned(key, in: zone).flatMap({ $0 }) ?? state.zones.values[slot].records[key]
            else { break }
            if current == name, let root = RecordShare.share(in: record)?.rootRecordName {
                return [root]
            }
            guard let parent = record.parent else { break }
            current = parent
        }
        return found
    }

    /// A limited participant's save: the record must be in a hierarchy they may write, and stay in
    /// one (a new record hangs from a record they may write). Refusals are `ACCESS_DENIED`.
    func checkHierarchyWrite(_ saved: Record, existing: Record?, in zone: ZoneID,
                             _ grants: [String: SharePermission], _ planned: PlannedChanges) throws(StoreError) {
        let name = saved.id.recordName
        if let existing {
            guard hierarchyPermission(of: name, in: zone, grants, planned) == .readWrite else {
                throw StoreError(.permissionFailure, "record \(name) is not in a hierarchy shared with you read-write")
            }
            guard saved.parent != existing.parent else { return }
        }
        guard let parent = saved.parent, hierarchyPermission(of: parent, in: zone, grants, planned) == .readWrite else {
            throw StoreError(.permissionFailure, "record \(name) must have as parent a record of a hierarchy shared "
                             + "with you read-write")
        }
    }

    /// A limited participant's delete: of a record they may write, never a shared root (only the
    /// owner deletes a shared hierarchy's root).
    func checkHierarchyDelete(_ name: String, in zone: ZoneID, _ grants: [String: SharePermission],
                              _ planned: PlannedChanges) throws(StoreError) {
        if grants[name] != nil {
            throw StoreError(.permissionFailure, "record \(name) is the root of a share: only its owner deletes it")
        }
        guard hierarchyPermission(of: name, in: zone, grants, planned) == .readWrite else {
            throw StoreError(.permissionFailure, "record \(name) is not in a hierarchy shared with you read-write")
        }
    }

    /// Plans the save of a record share: only its owner saves it, in the private database, in a
    /// custom zone; its root exists (or is saved before it in the request), is shared by no other
    /// share, and never changes; participants keep their acceptance; its short GUID is kept once
    /// made. `saved` leaves with the share's system fields and nothing else.
    func planRecordShare(_ saved: inout Record, existing: Record?, scope: DatabaseScope, zone: ZoneID,
                         _ planned: PlannedChanges, _ ctx: RequestContext) throws(StoreError) {
        let name = saved.id.recordName
        guard scope == .private else {
            throw StoreError(.permissionFailure, "only the owner saves a share, in the private database")
        }
        if zone.isDefaultZone {
            throw StoreError(.invalidArguments, "records of the default zone cannot be shared: use a custom zone")
        }
        if let existing, !RecordShare.isRecordShare(existing) {
            throw StoreError(.invalidArguments, "record \(name) is a \(existing.recordType), not a share")
        }
        let old = existing.flatMap(RecordShare.share(in:))
        if saved[RecordShare.Field.root] == nil, let root = old?.rootRecordName {
            saved[RecordShare.Field.root] = .string(root)
        }
        guard var share = RecordShare.share(in: saved), let root = share.rootRecordName else {
            throw StoreError(.invalidArguments, "share \(name) needs the record it shares (forRecord)")
        }
        if let old, old.rootRecordName != root {
            throw StoreError(.invalidArguments, "share \(name) shares \(old.rootRecordName ?? "-"); its root "
                             + "cannot change")
        }
        guard root != name, let rootRecord = current(RecordKey(root), in: zone, planned) else {
            throw StoreError(.unknownItem, "record \(root), which share \(name) shares, does not exist: save it "
                             + "first (before the share in the same request, or in an earlier one)")
        }
        if zoneShare(of: zone, planned) != nil {
            throw StoreError(.invalidArguments, "zone \(zone) is shared whole (cloudkit.zoneshare): a record "
                             + "takes part in one share")
        }
        if let other = rootRecord.share, other != name {
            throw StoreError(.invalidArguments, "record \(root) is already shared by \(other): a record takes part "
                             + "in one share")
        }
        if let slot = state.zones.index(forKey: zone),
           let other = state.zones.values[slot].recordShares.values.first(where: {
               $0.rootRecordName == root && $0.shareRecordName != name }) {
            throw StoreError(.invalidArguments, "record \(root) is already shared by \(other.shareRecordName)")
        }
        var participants: [String: ShareParticipant] = [:]
        for (user, p) in share.participants where user != ctx.user {
            participants[user] = ShareParticipant(userRecordName: user, permission: p.permission,
                                                  status: old?.participants[user]?.status ?? .invited)
        }
        share.participants = participants
        if let guid = old?.shortGUID { share.shortGUID = guid }
        saved.fields = RecordShare.fields(of: share)
        saved.share = nil
        saved.parent = nil
    }

    /// After a request's records are committed: each root's `share` names the share saved for it
    /// and is cleared when its share is deleted; a deleted root takes its share along. Each change
    /// is a save of the root (or share) with a new change tag, as CloudKit changes the root.
    /// Returns the roots saved again, which the request's answer shows as they now stand.
    mutating func syncRecordShareRoots(saved shares: [(zone: ZoneID, share: String, root: String)],
                                       deletedShares: [(zone: ZoneID, root: String)],
                                       deletedRoots: [(zone: ZoneID, share: String)],
                                       _ ctx: RequestContext) -> [RecordID: Record] {
        var roots: [RecordID: Record] = [:]
        for (zone, share, root) in shares {
            guard var record = state.zones[zone]?.records[RecordKey(root)], record.share != share else { continue }
            record.share = share
            record.recordChangeTag = newChangeTag()
            commit(.putRecord(record))
            roots[record.id] = record
        }
        for (zone, root) in deletedShares {
            guard var record = state.zones[zone]?.records[RecordKey(root)], record.share != nil else { continue }
            record.share = nil
            record.recordChangeTag = newChangeTag()
            commit(.putRecord(record))
            roots[record.id] = record
        }
        for (zone, share) in deletedRoots where state.zones[zone]?.records[RecordKey(share)] != nil {
            commit(.deleteRecord(RecordID(recordName: share, zoneID: zone), recordType: RecordShare.recordType,
                                 atMs: ctx.now.millisecondsSinceEpoch,
                                 sharedRoots: sharedRoots(of: share, in: zone, PlannedChanges())))
        }
        return roots
    }

    /// Accepts a record share for `ctx.user` (already resolved as one they may join): the share
    /// record is saved with the user accepted, and its zone appears in their shared database.
    mutating func acceptRecordShare(_ share: ZoneShare, _ ctx: RequestContext) throws(StoreError) -> ZoneShare {
        guard let permission = share.grantedPermission(for: ctx.user) else {
            throw StoreError(.permissionFailure, "\(ctx.user) is not a participant of share \(share.shareRecordName)")
        }
        if share.participants[ctx.user]?.status == .accepted { return share }
        let key = RecordKey(share.shareRecordName)
        guard var record = state.zones[share.zoneID]?.records[key] else {
            throw StoreError(.unknownItem, "share \(share.shareRecordName) does not exist")
        }
        var accepted = share
        accepted.participants[ctx.user] = ShareParticipant(userRecordName: ctx.user, permission: permission,
                                                           status: .accepted)
        record.fields = RecordShare.fields(of: accepted)
        record.recordChangeTag = newChangeTag()
        commit(.putRecord(record), recordKey: key)
        notifyZoneChanged(share.zoneID, recordTypes: [RecordShare.recordType], ctx)
        accepted.changeTag = record.recordChangeTag ?? ""
        return accepted
    }

    /// A record-share participant leaves the zone (zones/modify delete in the shared database):
    /// they are taken off every record share of it.
    mutating func leaveRecordShares(of zone: ZoneID, _ ctx: RequestContext) {
        guard let shares = state.zones[zone]?.recordShares else { return }
        for (key, share) in shares where share.participants[ctx.user] != nil {
            guard var record = state.zones[zone]?.records[key] else { continue }
            var left = share
            left.participants[ctx.user] = nil
            record.fields = RecordShare.fields(of: left)
            record.recordChangeTag = newChangeTag()
            commit(.putRecord(record), recordKey: key)
        }
    }
}
