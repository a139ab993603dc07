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
        guard zone.ownerName != ZoneID.publicOwnerName,
              let subscriptions = state.subscriptions(of: DatabaseKey(user: zone.ownerName, scope: .private)) else {
            return false
        }
        return subscriptions.values.contains { if case .query = $0.kind { true } else { false } }
    }

    /// The record `key` of `zone` as the store holds it now, read where the zone sits.
    func stored(_ key: RecordKey, in zone: ZoneID) -> Record? {
        guard let slot = state.zones.index(forKey: zone) else { return nil }
        return state.zones.values[slot].records[key]
    }

    /// Fires the query subscriptions of each changed record's zone (its owner's private database),
    /// as CloudKit's query subscriptions fire: per record, when the record matches the query (its
    /// type and every filter) and the change is one of `firesOn` — created matching, deleted
    /// matching, or updated matching before or after. Each notification names the record and why
    /// (`recordName`, `queryNotificationReason`); a `firesOnce` subscription is deleted once it
    /// has fired. Devices are told in name order, the author's own device skipped.
    mutating func notifyQuerySubscriptions(_ events: [RecordEvent], _ ctx: RequestContext) {
        guard !events.isEmpty else { return }
        var zones: [ZoneID] = []
        for e in events where !zones.contains(e.zone) { zones.append(e.zone) }
        for zone in zones {
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
                    let was = event.before.map(evaluator.matches) ?? false
                    let isNow = event.after.map(evaluator.matches) ?? false
                    let reason: QueryNotificationReason
                    switch (event.before, event.after) {
                    case (nil, _?) where isNow && sub.firesOn.contains(.create): reason = .recordCreated
                    case (_?, nil) where was && sub.firesOn.contains(.delete): reason = .recordDeleted
                    case (_?, _?) where (was || isNow) && sub.firesOn.contains(.update): reason = .recordUpdated
                    default: continue
                    }
                    for device in devices where !(key.user == ctx.user && device == ctx.deviceID) {
                        let n = PushNotification(notificationID: nextNotificationID, subscriptionID: sub.subscriptionID,
                                                 databaseScope: .private, zoneID: zone, recordName: event.recordName,
                                                 queryNotificationReason: reason)
                        nextNotificationID += 1
                        notifications.append(DeviceNotification(userRecordName: key.user, deviceID: device,
                                                                notification: n))
                    }
                    if sub.firesOnce {
                        spent.insert(sub.subscriptionID)
                        commit(.deleteSubscription(user: key.user, scope: .private, subscriptionID: sub.subscriptionID))
                    }
                }
            }
        }
    }
}
