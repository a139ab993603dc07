import ZoneCore

extension StoreEngine {
    /// Creates the zone-wide share of one of the user's custom zones (at most one per zone).
    public mutating func createShare(zone: ZoneID, publicPermission: SharePermission = .none,
                                     participants: [String: SharePermission] = [:], shortGUID: String? = nil,
                                     _ ctx: RequestContext) throws(StoreError) -> ZoneShare {
        try admit(ctx, touchesZone: true)
        if zone.isDefaultZone { throw StoreError(.invalidArguments, "the default zone cannot be shared") }
        let id = try resolveZone(zone, scope: .private, access: .write, ctx)
        if state.zones[id]?.share != nil {
            throw StoreError(.alreadyExists, "zone \(id) already has a zone-wide share")
        }
        var share = ZoneShare(zoneID: id, publicPermission: publicPermission, changeTag: newChangeTag(),
                              shortGUID: shortGUID)
        for (user, permission) in participants where user != ctx.user {
            share.participants[user] = ShareParticipant(userRecordName: user, permission: permission)
        }
        commit(.putShare(share))
        return share
    }

    /// Changes the participants or public permission of a zone's share (owner only). Removed
    /// participants lose access at once.
    public mutating func updateShare(zone: ZoneID, _ update: ShareUpdate,
                                     _ ctx: RequestContext) throws(StoreError) -> ZoneShare {
        try admit(ctx, touchesZone: true)
        let id = try resolveZone(zone, scope: .private, access: .write, ctx)
        guard var share = state.zones[id]?.share else {
            throw StoreError(.unknownItem, "zone \(id) has no share")
        }
        if let p = update.publicPermission { share.publicPermission = p }
        for (user, permission) in update.addParticipants where user != ctx.user {
            let status = share.participants[user]?.status ?? .invited
            share.participants[user] = ShareParticipant(userRecordName: user, permission: permission, status: status)
        }
        for user in update.removeParticipants { share.participants[user] = nil }
        // Public participants who joined under a public permission now withdrawn lose access too.
        share.changeTag = newChangeTag()
        commit(.putShare(share))
        return share
    }

    /// Deletes a zone's share: every participant loses access.
    public mutating func deleteShare(zone: ZoneID, _ ctx: RequestContext) throws(StoreError) {
        try admit(ctx, touchesZone: true)
        let id = try resolveZone(zone, scope: .private, access: .write, ctx)
        guard state.zones[id]?.share != nil else { throw StoreError(.unknownItem, "zone \(id) has no share") }
        commit(.deleteShare(id))
    }

    /// Accepts the share of another user's zone: the zone appears in the user's shared
    /// database. Accepting again is a no-op (the one accept function, spec §6).
    public mutating func acceptShare(zone: ZoneID, _ ctx: RequestContext) throws(StoreError) -> ZoneShare {
        try admit(ctx, touchesZone: true)
        guard !zone.ownerName.isEmpty, zone.ownerName != ctx.user else {
            throw StoreError(.invalidArguments, "accept names another user's zone (zoneName and ownerName)")
        }
        guard let zoneState = state.zones[zone] else { throw StoreError(.zoneNotFound, "zone \(zone) does not exist") }
        guard var share = zoneState.share else {
            throw StoreError(.unknownItem, "zone \(zone) is not shared")
        }
        guard let permission = share.grantedPermission(for: ctx.user) else {
            throw StoreError(.permissionFailure, "\(ctx.user) is not a participant of the share of \(zone)")
        }
        if share.participants[ctx.user]?.status == .accepted { return share }
        share.participants[ctx.user] = ShareParticipant(userRecordName: ctx.user, permission: permission,
                                                        status: .accepted)
        share.changeTag = newChangeTag()
        commit(.putShare(share))
        return share
    }

    /// The share of a zone, as its owner (private) or an accepted participant (shared) sees it.
    public mutating func fetchShare(zone: ZoneID, scope: DatabaseScope,
                                    _ ctx: RequestContext) throws(StoreError) -> ZoneShare {
        try admit(ctx, touchesZone: true)
        let id = try resolveZone(zone, scope: scope, access: .read, ctx)
        guard let share = state.zones[id]?.share else { throw StoreError(.unknownItem, "zone \(id) has no share") }
        return share
    }
}
