import ZoneCore

/// One record changed by a request, as query subscriptions see it: before and after (nil where
/// the record did not exist, or no longer does).
struct RecordEvent {
    var zone: ZoneID
    var recordName: String
    var before: Record?
    var after: Record?
}

extension StoreEngine {
    /// Whether a change in `zone` may fire a query subscription: its owner's private database
    /// holds one. Asked once per zone a request changes, so that requests in zones nobody watches
    /// by query (our peers' rooms, watched by database subscriptions) keep no record of their changes.
    mutating func watchedByQuery(_ zone: ZoneID) -> Bool {
        // The public zone: any user's public query subscription (PublicQueryIndex).
        if zone.ownerName == ZoneID.publicOwnerName { return !state.publicQueries.isEmpty }
        guard let subscriptions = state.subscriptions(of: DatabaseKey(user: zone.ownerName, scope: .private)) else {
            return false
        }
        return subscriptions.values.contains { if case .query = $0.kind { true } else { false } }
    }

    /// The record `key` of `zone` as the store holds it now, read where the zone sits.
    func stored(_ key: RecordKey, in zone: ZoneID) -> Record? {
        guard let slot = state.zones.index(forKey: zone) else { return nil }
        return state.zones.values[slot].records[key]
    }

    /// Fires the query subscriptions of each changed record's zone (its owner's private database,
    /// or for the public zone every user's public database), as CloudKit's query subscriptions
    /// fire: per record, when the record matches the query (its type and every filter) and the
    /// change is one of `firesOn` — created matching, deleted matching, or updated matching
    /// before or after. Each notification names the record and why
    /// (`recordName`, `queryNotificationReason`); a `firesOnce` subscription is deleted once it
    /// has fired. Devices are told in name order, the author's own device skipped.
    mutating func notifyQuerySubscriptions(_ events: [RecordEvent], _ ctx: RequestContext) {
        guard !events.isEmpty else { return }
        var zones: [ZoneID] = []
        for e in events where !zones.contains(e.zone) { zones.append(e.zone) }
        for zone in zones {
            if zone.ownerName == ZoneID.publicOwnerName {
                notifyPublicQuerySubscriptions(events.filter { $0.zone == zone }, ctx)
                continue
            }
            let key = DatabaseKey(user: zone.ownerName, scope: .private)
            guard let subscriptions = state.subscriptions(of: key) else { continue }
            var watching: [(Subscription, QueryEvaluator)] = []
            for sub in subscriptions.values.sorted(by: { $0.subscriptionID < $1.subscriptionID }) {
                guard case .query(let type, let z) = sub.kind,
                      z == nil || z!.resolvingOwner(zone.ownerName) == zone else { continue }
                watching.append((sub, QueryEvaluator(sub.query ?? RecordQuery(recordType: type))))
            }
            guard !watching.isEmpty else { continue }
            let devices = (state.devices[key.user] ?? []).sorted()
            var spent: Set<String> = []
            for event in events where event.zone == zone {
                for (sub, evaluator) in watching where !spent.contains(sub.subscriptionID) {
                    guard let reason = Self.reason(sub, evaluator, event) else { continue }
                    notify(key, devices, sub, event, reason, ctx)
                    if sub.firesOnce { spent.insert(sub.subscriptionID) }
                }
            }
        }
    }

    /// Fires the public database's query subscriptions on the records `events` changed in the public
    /// zone: for each record, the subscriptions filed under its type (`PublicQueryIndex`), in user
    /// then subscription order, each told to its user's devices. A public write costs one lookup
    /// per record changed plus one query evaluation per subscription on that record's type;
    /// subscriptions on other types are never read.
    private mutating func notifyPublicQuerySubscriptions(_ events: [RecordEvent], _ ctx: RequestContext) {
        // Each subscription read and its query compiled once per request.
        var evaluators: [PublicQueryIndex.Watcher: (Subscription, QueryEvaluator)] = [:]
        var spent: Set<PublicQueryIndex.Watcher> = []
        for event in events {
            guard let type = (event.after ?? event.before)?.recordType else { continue }
            for watcher in state.publicQueries.watchers(of: type) where !spent.contains(watcher) {
                let key = DatabaseKey(user: watcher.user, scope: .public)
                if evaluators[watcher] == nil {
                    guard let sub = state.subscriptions(of: key)?[watcher.subscriptionID],
                          case .query(let t, _) = sub.kind else { continue }
                    evaluators[watcher] = (sub, QueryEvaluator(sub.query ?? RecordQuery(recordType: t)))
                }
                let (sub, evaluator) = evaluators[watcher]!
                guard let reason = Self.reason(sub, evaluator, event) else { continue }
                notify(key, (state.devices[watcher.user] ?? []).sorted(), sub, event, reason, ctx)
                if sub.firesOnce { spent.insert(watcher) }
            }
        }
    }

    /// Why `sub` fires for `event`, or nil: created matching, deleted matching, or updated matching
    /// before or after, when that change is one of its `firesOn`.
    private static func reason(_ sub: Subscription, _ evaluator: QueryEvaluator,
                               _ event: RecordEvent) -> QueryNotificationReason? {
        let was = event.before.map(evaluator.matches) ?? false
        let isNow = event.after.map(evaluator.matches) ?? false
        switch (event.before, event.after) {
        case (nil, _?) where isNow && sub.firesOn.contains(.create): return .recordCreated
        case (_?, nil) where was && sub.firesOn.contains(.delete): return .recordDeleted
        case (_?, _?) where (was || isNow) && sub.firesOn.contains(.update): return .recordUpdated
        default: return nil
        }
    }

    /// Tells `devices` (in order) of `key`'s user that `sub` fired for `event`, the author's own
    /// device skipped; a `firesOnce` subscription is deleted.
    private mutating func notify(_ key: DatabaseKey, _ devices: [String], _ sub: Subscription, _ event: RecordEvent,
                                 _ reason: QueryNotificationReason, _ ctx: RequestContext) {
        for device in devices where !(key.user == ctx.user && device == ctx.deviceID) {
            let n = PushNotification(notificationID: nextNotificationID, subscriptionID: sub.subscriptionID,
                                     databaseScope: key.scope, zoneID: event.zone, recordName: event.recordName,
                                     queryNotificationReason: reason)
            nextNotificationID += 1
            notifications.append(DeviceNotification(userRecordName: key.user, deviceID: device, notification: n))
        }
        if sub.firesOnce {
            commit(.deleteSubscription(user: key.user, scope: key.scope, subscriptionID: sub.subscriptionID))
        }
    }
}
