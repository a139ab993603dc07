import ZoneCore

/// A save of a zone's share as a `cloudkit.share` record through `records/modify` (CloudKit Web
/// Services Reference, "Modifying Records" and "Types and Dictionaries" → Share Dictionary): the
/// record operation, and the share's keys as the request sent them.
public struct ZoneShareSave: Sendable, Hashable {
    /// How the save treats a share that exists (or not), as for any record.
    public enum Kind: String, Sendable, Hashable {
        /// Refused when the zone already has a share.
        case create
        /// Only what was sent changes; the tag must be the server's.
        case update
        /// As `update` whatever the tag; creates a missing share.
        case forceUpdate
        /// The share becomes what was sent (no participants, `NONE` unless sent); tag checked.
        case replace
        /// As `replace` whatever the tag; creates a missing share.
        case forceReplace
    }

    public var zone: ZoneID
    public var kind: Kind
    public var recordChangeTag: String?
    /// Nil: unchanged by an update, `NONE` otherwise.
    public var publicPermission: SharePermission?
    /// The participants the owner names, by user record name, with their permission; nil:
    /// unchanged by an update, none otherwise. Whoever is left out loses access.
    public var participants: [String: SharePermission]?
    /// A fresh short GUID, taken only by a share that has none yet.
    public var shortGUID: String

    public init(zone: ZoneID, kind: Kind, recordChangeTag: String? = nil, publicPermission: SharePermission? = nil,
                participants: [String: SharePermission]? = nil, shortGUID: String) {
        self.zone = zone
        self.kind = kind
        self.recordChangeTag = recordChangeTag
        self.publicPermission = publicPermission
        self.participants = participants
        self.shortGUID = shortGUID
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
    /// Saves the zone-wide share (`cloudkit.zoneshare`) of one of the user's custom zones, with
    /// the tag rules of record saves. Participants who accepted and stay keep their acceptance.
    public mutating func saveZoneShare(_ save: ZoneShareSave, _ ctx: RequestContext) throws(StoreError) -> ZoneShare {
        try admit(ctx, touchesZone: true)
        if save.zone.isDefaultZone {
            throw StoreError(.invalidArguments, "the default zone cannot be shared: share a custom zone")
        }
        let id = try resolveZone(save.zone, scope: .private, access: .write, ctx)
        let existing = state.zones[id]?.share
        switch (save.kind, existing) {
        case (.create, .some):
            throw StoreError(.serverRecordChanged, "zone \(id) already has a zone-wide share (cloudkit.zoneshare)")
        case (.update, nil), (.replace, nil):
            throw StoreError(.unknownItem, "zone \(id) has no share to \(save.kind.rawValue)")
        case (.update, .some(let share)), (.replace, .some(let share)):
            guard let tag = save.recordChangeTag else {
                throw StoreError(.invalidArguments, "recordChangeTag is required to \(save.kind.rawValue) a share")
            }
            guard tag == share.changeTag else {
                throw StoreError(.serverRecordChanged,
                                 "the share of \(id) is at change tag \(share.changeTag), not \(tag)")
            }
        default: break
        }
        let replacing = save.kind == .create || save.kind == .replace || save.kind == .forceReplace || existing == nil
        var share = existing ?? ZoneShare(zoneID: id, changeTag: "")
        if share.shortGUID == nil { share.shortGUID = save.shortGUID }
        if let p = save.publicPermission {
            share.publicPermission = p
        } else if replacing {
            share.publicPermission = .none
        }
        if let wanted = save.participants ?? (replacing ? [:] : nil) {
            var participants: [String: ShareParticipant] = [:]
            for (user, permission) in wanted where user != ctx.user {
                // Accepted under a public permission or as a participant: the acceptance stands.
                let status = share.participants[user]?.status ?? .invited
                participants[user] = ShareParticipant(userRecordName: user, permission: permission, status: status)
            }
            share.participants = participants
        }
        share.changeTag = newChangeTag()
        commit(.putShare(share))
        return share
    }

    /// Deletes a zone's share (`delete` with the tag checked when given; `forceDelete` without).
    public mutating func deleteZoneShare(zone: ZoneID, recordChangeTag: String?,
                                         _ ctx: RequestContext) throws(StoreError) {
        try admit(ctx, touchesZone: true)
        let id = try resolveZone(zone, scope: .private, access: .write, ctx)
        guard let share = state.zones[id]?.share else { throw StoreError(.unknownItem, "zone \(id) has no share") }
        if let tag = recordChangeTag, tag != share.changeTag {
            throw StoreError(.serverRecordChanged, "the share of \(id) is at change tag \(share.changeTag), not \(tag)")
        }
        commit(.deleteShare(id))
    }

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
