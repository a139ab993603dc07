import Foundation
import RecordStore

// subscriptions/modify, subscriptions/list and subscriptions/lookup as CloudKit Web Services
// Reference documents them ("Modifying Subscriptions", "Fetching Subscriptions", "Fetching
// Subscriptions by Identifier": developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// ModifySubscriptions.html, GetSubscriptions.html, LookupSubscriptionsbyID.html) with the
// Subscription Dictionary of "Types and Dictionaries" (Types.html). Every key is read strictly:
// one the pages do not list is `BAD_REQUEST` naming it.
extension StoreAPI {
    func modifySubscriptions(_ body: WireObject, scope: DatabaseScope,
                             client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.subscriptionsModifyRequest)
        let operations = try body.objects("operations", required: true)
        var save: [Subscription] = [], delete: [String] = []
        for op in operations {
            try op.allowing(.subscriptionOperation)
            let type = try op.requiredString("operationType")
            guard let raw = try op.object("subscription") else {
                throw WireFormat.ShapeError("\(op.name("subscription")) is required")
            }
            switch type {
            case "create", "update": save.append(try Self.decodeSubscription(raw))
            case "delete":
                try raw.allowing(.subscription)
                delete.append(try raw.requiredString("subscriptionID"))
            default:
                throw WireFormat.ShapeError("\(op.name("operationType")) '\(type)': create, update or delete")
            }
        }
        let results = try await client.modifySubscriptions(save: save, delete: delete, scope: scope)
        return ["subscriptions": results.map { r -> WireFormat.Object in
            switch r {
            case .saved(let s): return WireFormat.encode(s)
            case .deleted(let id): return ["subscriptionID": id, "deleted": true]
            case .failed(let id, let e):
                var eo = WireFormat.encode(e)
                eo["subscriptionID"] = id
                return eo
            }
        }]
    }

    func listSubscriptions(_ body: WireObject, scope: DatabaseScope,
                           client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.subscriptionsListRequest)
        return ["subscriptions": try await client.listSubscriptions(scope: scope).map(WireFormat.encode)]
    }

    /// One Subscription Dictionary or error dictionary (`NOT_FOUND`) per ID asked, in order.
    func lookupSubscriptions(_ body: WireObject, scope: DatabaseScope,
                             client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.subscriptionsLookupRequest)
        var ids: [String] = []
        for s in try body.objects("subscriptions", required: true) {
            try s.allowing(.subscriptionLookup)
            ids.append(try s.requiredString("subscriptionID"))
        }
        if ids.count > 200 {
            throw StoreError(.limitExceeded, "\(ids.count) subscriptions in one lookup; the limit is 200")
        }
        let held = Dictionary(try await client.listSubscriptions(scope: scope).map { ($0.subscriptionID, $0) },
                              uniquingKeysWith: { a, _ in a })
        return ["subscriptions": ids.map { id -> WireFormat.Object in
            if let sub = held[id] { return WireFormat.encode(sub) }
            var eo = WireFormat.encode(StoreError(.unknownItem, "no subscription '\(id)' in this database"))
            eo["subscriptionID"] = id
            return eo
        }]
    }

    /// The Subscription Dictionary of a request. `subscriptionType` `zone` with `zoneWide` true
    /// watches every zone of the database (our `database` subscription, which is also accepted by
    /// that name); without it, the `zoneID`'s zone. `query` takes the Query dictionary of
    /// records/query (its limits too), `firesOn` and `firesOnce`, which a zone subscription may not
    /// carry ("If the subscriptionType key is zone, the query, … firesOn, and firesOnce keys are
    /// omitted").
    static func decodeSubscription(_ o: WireObject) throws -> Subscription {
        try o.allowing(.subscription)
        let id = try o.requiredString("subscriptionID")
        let type = try o.string("subscriptionType") ?? "database"
        let zone = try o["zoneID"].map { try WireFormat.decodeZoneID($0, context: o.name("zoneID")) }
        let zoneWide = try o.bool("zoneWide") ?? false
        var sub: Subscription
        switch type {
        case "database", "zone":
            for key in ["query", "firesOn", "firesOnce"] where o[key] != nil {
                throw WireFormat.ShapeError("\(o.name(key)): a \(type) subscription has no \(key)")
            }
            if type == "database" || zoneWide {
                if zone != nil && type == "database" {
                    throw WireFormat.ShapeError("\(o.name("zoneID")): a database subscription watches every zone")
                }
                sub = Subscription(subscriptionID: id, kind: .database)
            } else {
                guard let zone else { throw WireFormat.ShapeError("\(o.name("zoneID")) is required for a zone subscription") }
                sub = Subscription(subscriptionID: id, kind: .zone(zone))
            }
        case "query":
            guard let q = try o.object("query") else { throw WireFormat.ShapeError("\(o.name("query")) is required") }
            let query = try decodeQuery(q, zone: zone ?? .defaultZone)
            sub = Subscription(subscriptionID: id, kind: .query(recordType: query.recordType,
                                                                zoneID: zoneWide ? nil : zone))
            sub.query = query
            if let fires = try o.strings("firesOn") {
                var set: Subscription.FiresOn = []
                for f in fires {
                    switch f {
                    case "create": set.insert(.create)
                    case "update": set.insert(.update)
                    case "delete": set.insert(.delete)
                    default: throw WireFormat.ShapeError("\(o.name("firesOn")): '\(f)' is not create, update or delete")
                    }
                }
                if set.isEmpty { throw WireFormat.ShapeError("\(o.name("firesOn")) must name at least one change") }
                sub.firesOn = set
            }
            sub.firesOnce = try o.bool("firesOnce") ?? false
        default:
            throw WireFormat.ShapeError("\(o.name("subscriptionType")) '\(type)': query or zone")
        }
        if let info = try o.object("notificationInfo") { sub.notificationInfo = try decodeNotificationInfo(info) }
        return sub
    }

    /// The Notification Info Dictionary, held to APNs' 4 KB payload: more is `BAD_REQUEST`
    /// (`limitExceeded`), as a notification carrying it could not be sent.
    static func decodeNotificationInfo(_ o: WireObject) throws -> NotificationInfo {
        try o.allowing(.notificationInfo)
        var info = NotificationInfo()
        for key in NotificationInfo.stringKeys.sorted() {
            if let v = try o.string(key) { info.strings[key] = v }
        }
        info.alertLocalizationArgs = try o.strings("alertLocalizationArgs")
        if (info.alertLocalizationArgs?.count ?? 0) > 64 {
            throw StoreError(.limitExceeded, "\(o.name("alertLocalizationArgs")): more than 64 arguments")
        }
        info.shouldBadge = try o.bool("shouldBadge")
        info.shouldSendContentAvailable = try o.bool("shouldSendContentAvailable")
        if info.byteCount > NotificationInfo.maxBytes {
            throw StoreError(.limitExceeded, "\(o.path): \(info.byteCount) bytes of text; a notification carries "
                             + "at most \(NotificationInfo.maxBytes) (APNs' payload limit)")
        }
        return info
    }
}

extension WireFormat {
    /// A Subscription Dictionary, as the pages answer it.
    public static func encode(_ sub: Subscription) -> Object {
        var o: Object = ["subscriptionID": sub.subscriptionID]
        switch sub.kind {
        case .database: o["subscriptionType"] = "database"; o["zoneWide"] = true
        case .zone(let z): o["subscriptionType"] = "zone"; o["zoneID"] = encode(z)
        case .query(let type, let z):
            o["subscriptionType"] = "query"
            o["query"] = encode(sub.query ?? RecordQuery(recordType: type))
            if let z { o["zoneID"] = encode(z) } else { o["zoneWide"] = true }
            var fires: [String] = []
            if sub.firesOn.contains(.create) { fires.append("create") }
            if sub.firesOn.contains(.update) { fires.append("update") }
            if sub.firesOn.contains(.delete) { fires.append("delete") }
            o["firesOn"] = fires
            o["firesOnce"] = sub.firesOnce
        }
        if let info = sub.notificationInfo {
            var io: Object = [:]
            for (k, v) in info.strings { io[k] = v }
            if let args = info.alertLocalizationArgs { io["alertLocalizationArgs"] = args }
            if let b = info.shouldBadge { io["shouldBadge"] = b }
            if let b = info.shouldSendContentAvailable { io["shouldSendContentAvailable"] = b }
            o["notificationInfo"] = io
        }
        return o
    }

    /// A Query dictionary, as records/query reads it.
    static func encode(_ q: RecordQuery) -> Object {
        var o: Object = ["recordType": q.recordType]
        if !q.filters.isEmpty {
            o["filterBy"] = q.filters.map { f -> Object in
                var fo: Object = ["comparator": f.comparator.rawValue, "fieldName": f.fieldName,
                                  "fieldValue": encodeField(f.value)]
                if let d = f.distance { fo["distance"] = d }
                return fo
            }
        }
        if !q.sort.isEmpty {
            o["sortBy"] = q.sort.map { s -> Object in
                var so: Object = ["fieldName": s.fieldName, "ascending": s.ascending]
                if let l = s.relativeLocation { so["relativeLocation"] = encodeField(.location(l)) }
                return so
            }
        }
        return o
    }
}
