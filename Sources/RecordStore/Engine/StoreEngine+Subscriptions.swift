import ZoneCore

extension StoreEngine {
    /// Saves and deletes subscriptions. The shared database takes database subscriptions only:
    /// query and zone subscriptions there are refused, as on CloudKit. The public database takes
    /// query subscriptions only (its one zone is the default zone, which no zone or database
    /// subscription watches), each the signed-in user's own. A query subscription's query is held
    /// to records/query's limits, its notification info to APNs' payload size.
    public mutating func modifySubscriptions(save: [Subscription], delete: [String], scope: DatabaseScope,
                                             _ ctx: RequestContext) throws(StoreError) -> [SubscriptionResult] {
        try admit(ctx, touchesZone: false)
        try checkSignedIn(scope: scope, access: .write, ctx)
        var results: [SubscriptionResult] = []
        for sub in save {
            do throws(StoreError) {
                if sub.subscriptionID.isEmpty || sub.subscriptionID.utf8.count > 255 {
                    throw StoreError(.invalidArguments, "a subscription ID has 1 to 255 characters")
                }
                switch (scope, sub.kind) {
                case (.public, .zone), (.public, .database):
                    throw StoreError(.invalidArguments, "the public database takes query subscriptions only: it has "
                                     + "no custom zones to watch")
                case (.shared, .zone), (.shared, .query):
                    throw StoreError(.invalidArguments,
                                     "only database subscriptions are allowed on the shared database")
                case (.private, .zone(let z)):
                    if z.isDefaultZone {
                        throw StoreError(.invalidArguments, "zone subscriptions need a custom zone")
                    }
                    _ = try resolveZone(z, scope: .private, access: .read, ctx)
                case (.private, .query(let type, let z)), (.public, .query(let type, let z)):
                    if let problem = NameRules.recordTypeProblem(type) { throw StoreError(.invalidArguments, problem) }
                    if let query = sub.query {
                        if query.recordType != type {
                            throw StoreError(.invalidArguments, "the query's recordType is not the subscription's")
                        }
                        try query.validate()
                        // The subscription formats keep a filter's field by name only.
                        if let f = query.filters.first(where: { $0.systemField != nil }) {
                            throw StoreError(.invalidArguments, "query.filterBy: systemFieldName (\(f.fieldName)) is "
                                             + "not supported in a subscription's query; filter records/query instead")
                        }
                    }
                    if let z { _ = try resolveZone(z, scope: scope, access: .read, ctx) }
                case (_, .database):
                    break
                }
                if let info = sub.notificationInfo, info.byteCount > NotificationInfo.maxBytes {
                    throw StoreError(.limitExceeded, "notificationInfo holds \(info.byteCount) bytes of text; the "
                                     + "limit is \(NotificationInfo.maxBytes) (APNs' payload)")
                }
                var stored = sub
                if case .zone(let z) = sub.kind { stored.kind = .zone(z.resolvingOwner(ctx.user)) }
                if case .query(let t, let z?) = sub.kind {
                    let zone = scope == .public ? ZoneID.publicZone : z.resolvingOwner(ctx.user)
                    stored.kind = .query(recordType: t, zoneID: zone)
                }
                commit(.putSubscription(user: ctx.user, scope: scope, stored))
                results.append(.saved(stored))
            } catch {
                results.append(.failed(sub.subscriptionID, error))
            }
        }
        for id in delete {
            let key = DatabaseKey(user: ctx.user, scope: scope)
            if state.databases[key]?.subscriptions[id] == nil {
                results.append(.failed(id, StoreError(.unknownItem, "no subscription '\(id)' in this database")))
            } else {
                commit(.deleteSubscription(user: ctx.user, scope: scope, subscriptionID: id))
                results.append(.deleted(id))
            }
        }
        return results
    }

    /// The user's subscriptions in a database, by ID.
    public mutating func listSubscriptions(scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) -> [Subscription] {
        try admit(ctx, touchesZone: false)
        let subs = state.databases[DatabaseKey(user: ctx.user, scope: scope)]?.subscriptions.values ?? [:].values
        return subs.sorted { $0.subscriptionID < $1.subscriptionID }
    }
}
