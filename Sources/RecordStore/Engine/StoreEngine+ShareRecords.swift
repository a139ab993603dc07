import ZoneCore

/// A share's keys as a `records/modify` request sent them (CloudKit Web Services Reference,
/// "Types and Dictionaries" → Share Request Keys); nil where not sent (unchanged by an `update`,
/// none otherwise).
public struct ShareKeys: Sendable, Hashable {
    public var publicPermission: SharePermission?
    /// The participants the owner names, by user record name, with their permission. Whoever is
    /// left out loses access.
    public var participants: [String: SharePermission]?

    public init(publicPermission: SharePermission? = nil, participants: [String: SharePermission]? = nil) {
        self.publicPermission = publicPermission
        self.participants = participants
    }
}

/// What `records/resolve` tells of a share: the share, and where the asking user stands with it.
public struct ResolvedShare: Sendable, Hashable {
    public var share: ZoneShare
    /// The asking user's participation (nil for the owner, who is no participant).
    public var participant: ShareParticipant?
    /// True when the asking user owns the share.
    public var isOwner: Bool
    /// A record share's root record, as it stands (nil for a zone-wide share).
    public var rootRecord: Record?
}

/// What `records/resolve` tells of a record saved with `createShortGUID`: the record, and what
/// the asking user may do with it.
public struct ResolvedRecord: Sendable, Hashable {
    public var record: Record
    /// True when the asking user owns the record's zone (or, in the public database, created it).
    public var isOwner: Bool
    /// What the asking user may do with the record.
    public var permission: SharePermission
}

/// What a short GUID leads to (records/resolve): a share, or a record with a short GUID of its own.
public enum ResolvedShortGUID: Sendable, Hashable {
    case share(ResolvedShare)
    case record(ResolvedRecord)
}

extension StoreEngine {
    /// What a short GUID names, for a user who may learn of it (records/resolve, "Fetching Record
    /// Information"): a share (`resolveShare`), or a record saved with `createShortGUID`, which
    /// whoever may read the record may resolve — anyone for the public database, the zone's owner,
    /// and the participants who reach it through a share they accepted. Anyone else is told
    /// `ACCESS_DENIED`; a short GUID nothing has is `NOT_FOUND` (a guess learns nothing else).
    public mutating func resolve(shortGUID: String, _ ctx: RequestContext) throws(StoreError) -> ResolvedShortGUID {
        try admit(ctx, touchesZone: false)
        switch state.shortGUIDs[shortGUID] {
        case .zoneShare(let zone)?:
            if let share = state.zones[zone]?.share { return .share(try resolved(share, ctx)) }
        case .record(let id)?:
            guard let record = state.zones[id.zoneID]?.records[RecordKey(id.recordName)] else { break }
            if let share = RecordShare.share(in: record) { return .share(try resolved(share, ctx)) }
            return .record(try resolved(record, ctx))
        case nil:
            break
        }
        throw StoreError(.unknownItem, "nothing has the short GUID \(shortGUID)")
    }

    /// The share a short GUID names, for a user who may learn of it: its owner, a participant, or
    /// anyone when its public permission is not `NONE`. A record's short GUID is `BAD_REQUEST`.
    public mutating func resolveShare(shortGUID: String, _ ctx: RequestContext) throws(StoreError) -> ResolvedShare {
        switch try resolve(shortGUID: shortGUID, ctx) {
        case .share(let resolved): return resolved
        case .record(let resolved):
            throw StoreError(.invalidArguments, "the short GUID \(shortGUID) names the record "
                             + "\(resolved.record.id.recordName), not a share: there is nothing to accept")
        }
    }

    private func resolved(_ share: ZoneShare, _ ctx: RequestContext) throws(StoreError) -> ResolvedShare {
        let root = share.rootRecordName.flatMap { state.zones[share.zoneID]?.records[RecordKey($0)] }
        if share.ownerName == ctx.user {
            return ResolvedShare(share: share, participant: nil, isOwner: true, rootRecord: root)
        }
        if let p = share.participants[ctx.user] {
            return ResolvedShare(share: share, participant: p, isOwner: false, rootRecord: root)
        }
        guard share.publicPermission != .none else {
            throw StoreError(.permissionFailure,
                             "\(ctx.user) is not a participant of the share \(share.shortGUID ?? "")")
        }
        let visitor = ShareParticipant(userRecordName: ctx.user, permission: share.publicPermission)
        return ResolvedShare(share: share, participant: visitor, isOwner: false, rootRecord: root)
    }

    private func resolved(_ record: Record, _ ctx: RequestContext) throws(StoreError) -> ResolvedRecord {
        let zone = record.id.zoneID
        if zone.ownerName == ZoneID.publicOwnerName {
            // World readable, writable by its creator (the public database's default roles).
            let creator = record.created?.userRecordName == ctx.user && !ctx.isAnonymous
            return ResolvedRecord(record: record, isOwner: creator, permission: creator ? .readWrite : .readOnly)
        }
        if zone.ownerName == ctx.user { return ResolvedRecord(record: record, isOwner: true, permission: .readWrite) }
        if let slot = state.zones.index(forKey: zone) {
            if let p = state.zones.values[slot].acceptedPermissions[ctx.user] {
                return ResolvedRecord(record: record, isOwner: false, permission: p)
            }
            if let grants = state.zones.values[slot].recordGrants[ctx.user],
               let p = hierarchyPermission(of: record.id.recordName, in: zone, grants) {
                return ResolvedRecord(record: record, isOwner: false, permission: p)
            }
        }
        throw StoreError(.permissionFailure, "\(ctx.user) may not read the record whose short GUID this is")
    }

    /// Accepts the share a short GUID names: its zone appears in the user's shared database.
    /// Accepting again changes nothing (no new change tag, no second zone change).
    public mutating func acceptShare(shortGUID: String, _ ctx: RequestContext) throws(StoreError) -> ResolvedShare {
        let resolved = try resolveShare(shortGUID: shortGUID, ctx)
        if resolved.isOwner {
            throw StoreError(.invalidArguments, "the owner of a share does not accept it: the zone is in their "
                                                + "private database")
        }
        if resolved.share.rootRecordName != nil {
            let share = try acceptRecordShare(resolved.share, ctx)
            return ResolvedShare(share: share, participant: share.participants[ctx.user], isOwner: false,
                                 rootRecord: resolved.rootRecord)
        }
        let share = try acceptShare(zone: resolved.share.zoneID, ctx)
        return ResolvedShare(share: share, participant: share.participants[ctx.user], isOwner: false)
    }
}
