import ZoneCore

/// The record store with CloudKit's semantics, as a synchronous, deterministic core.
///
/// Every operation takes the acting user and `now` in a `RequestContext`; nothing here reads a
/// clock, touches a file or starts a task. Effects leave through two outboxes the caller drains:
/// `drainMutations()` (for the journal, before acknowledging) and `drainNotifications()` (for
/// the push delivery model, after the write is durable).
public struct StoreEngine: Sendable {
    public let configuration: StoreConfiguration
    var state = StoreState()
    private var throttle: Throttle
    private var committed: [Mutation] = []
    /// Whether committed mutations are kept for `drainMutations()`. A store that journals nothing
    /// (the simulator's, whose state lives in memory alone) turns this off, and what was kept is let
    /// go: otherwise the mutations pile up, each holding its record.
    public var keepsMutations = true {
        didSet { if !keepsMutations { committed.removeAll() } }
    }
    var notifications: [DeviceNotification] = []
    var nextNotificationID: UInt64 = 1

    public init(configuration: StoreConfiguration = .default) {
        self.configuration = configuration
        throttle = Throttle(policy: configuration.throttle)
    }

    /// Applies a journalled mutation during recovery (no validation, no notifications).
    mutating func replay(_ m: Mutation) { state.apply(m) }

    /// Applies and records a mutation made by an operation; `recordKey` is the key of the record
    /// a record's mutation names, when the operation has made it already.
    mutating func commit(_ m: Mutation, recordKey: RecordKey? = nil) {
        state.apply(m, recordKey: recordKey)
        if keepsMutations { committed.append(m) }
    }

    /// Mutations committed since the last drain, in order: one journal entry's worth.
    mutating func drainMutations() -> [Mutation] {
        defer { committed.removeAll(keepingCapacity: true) }
        return committed
    }

    /// Notifications generated since the last drain, for the push delivery model.
    public mutating func drainNotifications() -> [DeviceNotification] {
        // Handed over whole: the caller holds the buffer, so keeping its capacity here would
        // allocate a new one on every drain, most of which find nothing.
        guard !notifications.isEmpty else { return [] }
        defer { notifications = [] }
        return notifications
    }

    /// Checks the throttling policy for this request.
    mutating func admit(_ ctx: RequestContext, touchesZone: Bool) throws(StoreError) {
        if let error = throttle.admit(ctx, touchesZone: touchesZone) { throw error }
    }

    mutating func newChangeTag() -> String {
        // The counter is read back from disk on recovery: a damaged maximum wraps instead of trapping.
        defer { state.nextChangeTag &+= 1 }
        return Self.changeTag(state.nextChangeTag)
    }

    /// `n` in lowercase hexadecimal without leading zeros.
    static func changeTag(_ n: UInt64) -> String { Hex.string(n) }

    // MARK: Access

    /// What a user may do in a zone through a database.
    enum Access { case read, write }

    /// Resolves the zone a request addresses, checking that `ctx.user` may reach it through
    /// `scope` with `access`. Returns the resolved zone ID (owner filled in).
    func resolveZone(_ zoneID: ZoneID, scope: DatabaseScope, access: Access,
                     _ ctx: RequestContext) throws(StoreError) -> ZoneID {
        try checkSignedIn(scope: scope, access: access, ctx)
        switch scope {
        case .public:
            // "You cannot create custom zones in the public database": its default zone is all there is.
            guard zoneID.isDefaultZone,
                  zoneID.ownerName.isEmpty || zoneID.ownerName == ZoneID.publicOwnerName else {
                throw StoreError(.zoneNotFound, "zone \(zoneID) is not in the public database: it has only "
                                 + "its default zone")
            }
            return ZoneID.publicZone
        case .private:
            let id = zoneID.resolvingOwner(ctx.user)
            guard id.ownerName == ctx.user else {
                throw StoreError(.permissionFailure,
                                 "zone \(id) belongs to another user's private database; use the shared database")
            }
            if id.isDefaultZone { return id }
            guard state.zones[id] != nil else { throw StoreError(.zoneNotFound, "zone \(id) does not exist") }
            return id
        case .shared:
            guard !zoneID.ownerName.isEmpty, zoneID.ownerName != ctx.user else {
                throw StoreError(.zoneNotFound,
                                 "zone \(zoneID.zoneName) is not in the shared database: name its owner, "
                                 + "and reach your own zones through the private database")
            }
            if zoneID.isDefaultZone {
                throw StoreError(.zoneNotFound, "default zones are never shared")
            }
            guard let zone = state.zones[zoneID] else {
                throw StoreError(.zoneNotFound, "zone \(zoneID) does not exist")
            }
            guard let permission = zone.acceptedPermissions[ctx.user] else {
                // A record share's participant reaches the zone; each record is checked against
                // the hierarchies the user may reach (StoreEngine+RecordShareAccess.swift).
                if zone.recordGrants[ctx.user] != nil { return zoneID }
                throw StoreError(.permissionFailure, "zone \(zoneID) is not shared with \(ctx.user) (or not accepted)")
            }
            if access == .write && !permission.allowsWrite {
                throw StoreError(.permissionFailure, "\(ctx.user) has read-only access to zone \(zoneID)")
            }
            return zoneID
        }
    }

    /// The anonymous reader (`RequestContext.anonymous`) may read the public database and nothing
    /// else: anything more needs a signed-in user, `AUTHENTICATION_REQUIRED`.
    func checkSignedIn(scope: DatabaseScope, access: Access, _ ctx: RequestContext) throws(StoreError) {
        guard ctx.isAnonymous, scope != .public || access == .write else { return }
        throw StoreError(.notAuthenticated, scope == .public
                         ? "writing to the public database needs a signed-in user"
                         : "the \(scope.rawValue) database needs a signed-in user")
    }

    /// In the public database a record is changed or deleted by the user who created it alone
    /// (CloudKit's default security roles: "world readable, owner writable"): `ACCESS_DENIED`.
    static func checkCreator(of existing: Record, scope: DatabaseScope, _ ctx: RequestContext) throws(StoreError) {
        guard scope == .public, let creator = existing.created?.userRecordName, creator != ctx.user else { return }
        throw StoreError(.permissionFailure, "record \(existing.id.recordName) of the public database was created "
                         + "by another user: only its creator may change or delete it")
    }

    // MARK: Notifications

    /// Generates notifications for a committed change to `zoneID` touching `recordTypes` (each
    /// named once), for every database and zone subscription of a device that can see the zone,
    /// except the author's device (query subscriptions: `notifyQuerySubscriptions`).
    mutating func notifyZoneChanged(_ zoneID: ZoneID, recordTypes: [String], _ ctx: RequestContext) {
        // The owner's private database first, then each accepted participant's shared database in
        // name order.
        // The zone's own keys where it exists (their names hashed once, when it was made).
        let slot = state.zones.index(forKey: zoneID)
        let reached = slot.map { state.databases(ofZoneAt: $0) }
        let ownerKey = reached?.owner ?? DatabaseKey(user: zoneID.ownerName, scope: .private)
        if let subscriptions = state.subscriptions(of: ownerKey) {
            notify(ownerKey, subscriptions, zoneID, ctx) { sub in
                switch sub.kind {
                case .database: return !zoneID.isDefaultZone
                case .zone(let z): return z.resolvingOwner(zoneID.ownerName) == zoneID
                case .query:
                    // Per record, with the record's before and after: notifyQuerySubscriptions.
                    return false
                }
            }
        }
        guard let reached else { return }
        for key in reached.shared {
            guard let subscriptions = state.subscriptions(of: key) else { continue }
            notify(key, subscriptions, zoneID, ctx) { $0.kind == .database }
        }
    }

    /// One notification per subscription of `key`'s database that `fires` (by ID) and registered
    /// device of its user (sorted), except the author's device.
    private mutating func notify(_ key: DatabaseKey, _ subscriptions: [String: Subscription], _ zoneID: ZoneID,
                                 _ ctx: RequestContext, where fires: (Subscription) -> Bool) {
        // Usually one subscription fires, for one device: only several are gathered and sorted.
        // Subscriptions are read where they sit, by position: an iterator's or a variable's
        // optional subscription is destroyed through the runtime's generic Optional witness.
        var firstAt: [String: Subscription].Index?
        var others: [Subscription] = []
        var at = subscriptions.startIndex
        while at != subscriptions.endIndex {
            if fires(subscriptions.values[at]) {
                if firstAt == nil { firstAt = at } else { others.append(subscriptions.values[at]) }
            }
            subscriptions.formIndex(after: &at)
        }
        guard let firstAt, let registered = state.devices[key.user], !registered.isEmpty else { return }
        let first = subscriptions.values[firstAt]
        func send(_ sub: Subscription) {
            let hint: ZoneID?
            switch sub.kind {
            case .database: hint = nil
            case .zone, .query: hint = zoneID
            }
            func send(to device: String) {
                guard !(key.user == ctx.user && device == ctx.deviceID) else { return }
                let n = PushNotification(notificationID: nextNotificationID, subscriptionID: sub.subscriptionID,
                                         databaseScope: key.scope, zoneID: hint)
                nextNotificationID += 1
                notifications.append(DeviceNotification(userRecordName: key.user, deviceID: device, notification: n))
            }
            if registered.count == 1 {
                for device in registered { send(to: device) }
            } else {
                for device in registered.sorted() { send(to: device) }
            }
        }
        if others.isEmpty {
            send(first)
        } else {
            others.append(first)
            for sub in others.sorted(by: { $0.subscriptionID < $1.subscriptionID }) { send(sub) }
        }
    }

    // MARK: Devices

    /// Devices registered for push, over all users.
    public var registeredDeviceCount: Int {
        var count = 0
        for devices in state.devices.values { count += devices.count }
        return count
    }

    /// Registers `ctx.deviceID` of `ctx.user` for push (idempotent).
    public mutating func registerDevice(_ ctx: RequestContext) throws(StoreError) {
        guard let device = ctx.deviceID, !device.isEmpty else {
            throw StoreError(.invalidArguments, "a device ID is needed to register for push")
        }
        guard device.utf8.count <= 255 else {
            throw StoreError(.invalidArguments, "a device ID has at most 255 bytes")
        }
        if state.devices[ctx.user]?.contains(device) == true { return }
        let registered = state.devices[ctx.user]?.count ?? 0
        guard registered < configuration.maxDevicesPerUser else {
            throw StoreError(.limitExceeded, "the user '\(ctx.user)' already has \(registered) devices registered for "
                             + "push, the most this store allows (--max-devices-per-user)")
        }
        commit(.registerDevice(user: ctx.user, deviceID: device))
    }
}
