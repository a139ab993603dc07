import ZoneCore

extension StoreEngine {
    /// Creates and deletes custom zones (private database). In the shared database, deleting a
    /// zone means leaving its share; creating one there is refused.
    public mutating func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope,
                                     _ ctx: RequestContext) throws(StoreError) -> [ZoneResult] {
        try admit(ctx, touchesZone: false)
        if save.count + delete.count > configuration.maxItemsPerRequest {
            throw StoreError(.limitExceeded, "\(save.count + delete.count) zones in one request; the limit is "
                             + "\(configuration.maxItemsPerRequest)")
        }
        var results: [ZoneResult] = []
        for zone in save {
            do throws(StoreError) {
                if scope == .public {
                    throw StoreError(.invalidArguments, "the public database has only its default zone: "
                                     + "zones are created in the private database")
                }
                guard scope == .private else {
                    throw StoreError(.permissionFailure, "zones are created in the owner's private database")
                }
                let id = zone.resolvingOwner(ctx.user)
                guard id.ownerName == ctx.user else {
                    throw StoreError(.permissionFailure, "cannot create a zone in another user's private database")
                }
                if let problem = NameRules.zoneNameProblem(id.zoneName) { throw StoreError(.invalidArguments, problem) }
                if !id.isDefaultZone && state.zones[id] == nil {
                    commit(.createZone(id, incarnation: state.nextIncarnation, atMs: ctx.now.millisecondsSinceEpoch))
                }
                results.append(.saved(id))
            } catch {
                results.append(.failed(zone, error))
            }
        }
        for zone in delete {
            do throws(StoreError) {
                if zone.isDefaultZone { throw StoreError(.invalidArguments, "the default zone cannot be deleted") }
                switch scope {
                case .public:
                    throw StoreError(.invalidArguments, "the public database has only its default zone")
                case .private:
                    let id = try resolveZone(zone, scope: .private, access: .write, ctx)
                    commit(.deleteZone(id, purged: false))
                    results.append(.deleted(id))
                case .shared:
                    let id = try resolveZone(zone, scope: .shared, access: .read, ctx)
                    if var share = state.zones[id]?.share, share.participants[ctx.user] != nil {
                        share.participants[ctx.user] = nil
                        share.changeTag = newChangeTag()
                        commit(.putShare(share))
                    }
                    leaveRecordShares(of: id, ctx)
                    results.append(.deleted(id))
                }
            } catch {
                results.append(.failed(zone, error))
            }
        }
        return results
    }

    /// Removes a zone as if the user had cleared its data: database feeds report it purged.
    public mutating func purgeZone(_ zone: ZoneID, _ ctx: RequestContext) throws(StoreError) {
        try admit(ctx, touchesZone: false)
        if zone.isDefaultZone { throw StoreError(.invalidArguments, "the default zone cannot be purged") }
        let id = try resolveZone(zone, scope: .private, access: .write, ctx)
        commit(.deleteZone(id, purged: true))
    }

    /// The zones of a database: the user's own custom zones and default zone (private), or the
    /// zones shared with and accepted by the user (shared).
    public mutating func listZones(scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> [ZoneID] {
        try admit(ctx, touchesZone: false)
        return try zoneIDs(scope: scope, ctx)
    }

    /// The zones of a database (`listZones` without admission).
    func zoneIDs(scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> [ZoneID] {
        try checkSignedIn(scope: scope, access: .read, ctx)
        switch scope {
        case .public:
            return [ZoneID.publicZone]
        case .private:
            let own = state.zones.keys.filter { $0.ownerName == ctx.user && !$0.isDefaultZone }
            return [state.defaultZoneID(of: ctx.user)] + own.sorted { $0.zoneName < $1.zoneName }
        case .shared:
            return state.zones.values
                .filter { $0.acceptedUsers.contains(ctx.user) }
                .map(\.id)
                .sorted { ($0.ownerName, $0.zoneName) < ($1.ownerName, $1.zoneName) }
        }
    }
}
