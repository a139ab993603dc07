/// A push subscription, saved in one of a user's databases.
public struct Subscription: Hashable, Sendable {
    /// What a subscription watches.
    public enum Kind: Hashable, Sendable {
        /// Every custom zone of the database (`CKDatabaseSubscription`).
        case database
        /// One zone (`CKRecordZoneSubscription`): private database only.
        case zone(ZoneID)
        /// Records of one type, in one zone or all (`CKQuerySubscription`): private database only.
        case query(recordType: String, zoneID: ZoneID?)
    }

    /// The changes a query subscription fires on (the Subscription Dictionary's `firesOn`).
    public struct FiresOn: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// A matching record created.
        public static let create = FiresOn(rawValue: 1)
        /// A record updated that matches the query before or after the change.
        public static let update = FiresOn(rawValue: 2)
        /// A matching record deleted.
        public static let delete = FiresOn(rawValue: 4)
        public static let all: FiresOn = [.create, .update, .delete]
    }

    public var subscriptionID: String
    public var kind: Kind
    /// A query subscription's whole query (its `recordType` is the kind's): the records whose
    /// changes fire it. Nil: every record of the kind's type.
    public var query: RecordQuery?
    /// Query subscriptions: which changes fire it (all three by default).
    public var firesOn: FiresOn = .all
    /// Query subscriptions: removed once it has fired.
    public var firesOnce = false
    /// What the client asked notifications to show, kept and answered back.
    public var notificationInfo: NotificationInfo?

    public init(subscriptionID: String, kind: Kind) {
        self.subscriptionID = subscriptionID
        self.kind = kind
    }

    /// Whether it uses anything the first subscription format could not store (`MutationCodec`).
    var needsFormat2: Bool {
        query.map { !$0.filters.isEmpty || !$0.sort.isEmpty } == true || firesOn != .all || firesOnce
            || notificationInfo != nil
    }
}

/// The Notification Info Dictionary of a subscription: what a push should show. The store has
/// no APNs to hand it to: it is kept and answered back, and its size is held to APNs' payload
/// limit so that a client cannot store what no notification could carry.
public struct NotificationInfo: Hashable, Sendable {
    /// The string keys (`alertBody`, `alertLocalizationKey`, `alertActionLocalizationKey`,
    /// `alertLaunchImage`, `soundName`), by key.
    public var strings: [String: String] = [:]
    /// `alertLocalizationArgs`.
    public var alertLocalizationArgs: [String]?
    public var shouldBadge: Bool?
    public var shouldSendContentAvailable: Bool?

    /// The string keys the dictionary has.
    public static let stringKeys: Set<String> = ["alertBody", "alertLocalizationKey", "alertActionLocalizationKey",
                                                 "alertLaunchImage", "soundName"]
    /// APNs' payload limit: all the text together may be no longer.
    public static let maxBytes = 4096

    public init() {}

    /// Bytes of text it holds (keys and values).
    public var byteCount: Int {
        var n = 0
        for (k, v) in strings { n += k.utf8.count + v.utf8.count }
        for a in alertLocalizationArgs ?? [] { n += a.utf8.count }
        return n
    }
}

/// Why a query subscription fired (the CloudKit framework's `CKQueryNotification.Reason`).
public enum QueryNotificationReason: String, Hashable, Sendable, Codable {
    case recordCreated, recordUpdated, recordDeleted
}

/// What a notification says: only a hint to fetch, never the data.
public struct PushNotification: Hashable, Sendable, Codable {
    /// Unique per store run, increasing; lets receivers see coalescing and loss.
    public var notificationID: UInt64
    public var subscriptionID: String
    public var databaseScope: DatabaseScope
    /// The zone that changed, when the subscription kind carries one (zone and query subscriptions).
    public var zoneID: ZoneID?
    /// Query subscriptions: the record that changed, and how (`CKQueryNotification`'s `recordID`
    /// and `queryNotificationReason`).
    public var recordName: String?
    public var queryNotificationReason: QueryNotificationReason?

    public init(notificationID: UInt64, subscriptionID: String, databaseScope: DatabaseScope, zoneID: ZoneID?,
                recordName: String? = nil, queryNotificationReason: QueryNotificationReason? = nil) {
        self.notificationID = notificationID
        self.subscriptionID = subscriptionID
        self.databaseScope = databaseScope
        self.zoneID = zoneID
        self.recordName = recordName
        self.queryNotificationReason = queryNotificationReason
    }
}

/// A notification addressed to one device, as the engine emits it for the push delivery model.
public struct DeviceNotification: Hashable, Sendable {
    public var userRecordName: String
    public var deviceID: String
    public var notification: PushNotification

    public init(userRecordName: String, deviceID: String, notification: PushNotification) {
        self.userRecordName = userRecordName
        self.deviceID = deviceID
        self.notification = notification
    }
}
