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

extension StoreEngine {
    /// The share a short GUID names, for a user who may learn of it: its owner, a participant, or
    /// anyone when its public permission is not `NONE`. Anyone else is told `ACCESS_DENIED`; a
    /// short GUID no share has is `NOT_FOUND` (a guess learns nothing else).
    public mutating func resolveShare(shortGUID: String, _ ctx: RequestContext) throws(StoreError) -> ResolvedShare {
        try admit(ctx, touchesZone: false)
        guard let share = share(shortGUID: shortGUID) ?? recordShare(shortGUID: shortGUID) else {
            throw StoreError(.unknownItem, "no share has the short GUID \(shortGUID)")
        }
        let root = share.rootRecordName.flatMap { state.zones[share.zoneID]?.records[RecordKey($0)] }
        if share.ownerName == ctx.user {
            return ResolvedShare(share: share, participant: nil, isOwner: true, rootRecord: root)
        }
        if let p = share.participants[ctx.user] {
            return ResolvedShare(share: share, participant: p, isOwner: false, rootRecord: root)
        }
        guard share.publicPermission != .none else {
            throw StoreError(.permissionFailure, "\(ctx.user) is not a participant of the share \(shortGUID)")
        }
        let visitor = ShareParticipant(userRecordName: ctx.user, permission: share.publicPermission)
        return ResolvedShare(share: share, participant: visitor, isOwner: false, rootRecord: root)
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

    /// The share with `shortGUID`. A scan of the zones: resolving a share URL is rare next to
    /// record traffic, and an index would be one more thing every share change and snapshot
    /// load keeps in step.
    func share(shortGUID: String) -> ZoneShare? {
        guard !shortGUID.isEmpty else { return nil }
        for zone in state.zones.values {
            if let share = zone.share, share.shortGUID == shortGUID { return share }
        }
        return nil
    }
}
