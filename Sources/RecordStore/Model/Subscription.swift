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

    public var subscriptionID: String
    public var kind: Kind

    public init(subscriptionID: String, kind: Kind) {
        self.subscriptionID = subscriptionID
        self.kind = kind
    }
}

/// What a notification says: only a hint to fetch, never the data.
public struct PushNotification: Hashable, Sendable, Codable {
    /// Unique per store run, increasing; lets receivers see coalescing and loss.
    public var notificationID: UInt64
    public var subscriptionID: String
    public var databaseScope: DatabaseScope
    /// The zone that changed, when the subscription kind carries one (zone and query subscriptions).
    public var zoneID: ZoneID?

    public init(notificationID: UInt64, subscriptionID: String, databaseScope: DatabaseScope, zoneID: ZoneID?) {
        self.notificationID = notificationID
        self.subscriptionID = subscriptionID
        self.databaseScope = databaseScope
        self.zoneID = zoneID
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
