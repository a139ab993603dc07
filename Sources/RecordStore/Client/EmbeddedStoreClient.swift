import Foundation
import ZoneCore

/// A `StoreClient` that calls a store backend in-process: the embedded store, or (in the daemon)
/// whichever backend serves it.
public struct EmbeddedStoreClient: StoreClient {
    public let store: any StoreBackend
    public let userRecordName: String
    public let deviceID: String
    /// Where uploaded asset files are kept: a saved asset dictionary's `receipt` must name one of
    /// them (`AssetReceipts`). Nil: no receipt is taken.
    public var assets: (any AssetStorage)?

    func run<T: Sendable>(
        _ access: StoreAccess = .write,
        _ op: @escaping @Sendable (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) async throws -> T {
        try await store.perform(user: userRecordName, deviceID: deviceID, access: access, op)
    }

    public func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope) async throws -> ModifyRecordsResult {
        let now = Date(timeIntervalSince1970: Double(store.clock.now().millisecondsSinceEpoch) / 1000)
        try await AssetReceipts.check(request.operations, in: assets, now: now)
        return try await run { e, c throws(StoreError) in try e.modifyRecords(request, scope: scope, c) }
    }

    public func lookupRecords(_ ids: [RecordID], scope: DatabaseScope) async throws -> [LookupResult] {
        try await run(.read) { e, c throws(StoreError) in try e.lookupRecords(ids, scope: scope, c) }
    }

    public func queryRecords(recordType: String, in zone: ZoneID, filters: [String: FieldValue],
                             scope: DatabaseScope) async throws -> [Record] {
        try await run(.read) { e, c throws(StoreError) in
            try e.queryRecords(recordType: recordType, in: zone, filters: filters, scope: scope, c)
        }
    }

    /// A page of a records/query answer (`StoreEngine.queryRecords(_:in:zoneWide:…)`).
    public func query(_ query: RecordQuery, in zone: ZoneID?, zoneWide: Bool, resultsLimit: Int?,
                      continuationMarker: String?, scope: DatabaseScope) async throws -> QueryPage {
        try await run(.read) { e, c throws(StoreError) in
            try e.queryRecords(query, in: zone, zoneWide: zoneWide, resultsLimit: resultsLimit,
                               continuationMarker: continuationMarker, scope: scope, c)
        }
    }

    /// Zones by ID (zones/lookup), each found or failed.
    public func lookupZones(_ zones: [ZoneID], scope: DatabaseScope) async throws -> [ZoneLookupResult] {
        try await run(.read) { e, c throws(StoreError) in try e.lookupZones(zones, scope: scope, c) }
    }

    public func fetchZoneChanges(_ zone: ZoneID, since token: ChangeToken?, resultsLimit: Int?,
                                 scope: DatabaseScope) async throws -> ZoneChanges {
        try await run(.read) { e, c throws(StoreError) in
            try e.fetchZoneChanges(zone, since: token, resultsLimit: resultsLimit, scope: scope, c)
        }
    }

    public func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int?,
                                     scope: DatabaseScope) async throws -> DatabaseChanges {
        try await run(.read) { e, c throws(StoreError) in
            try e.fetchDatabaseChanges(since: token, resultsLimit: resultsLimit, scope: scope, c)
        }
    }

    public func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope) async throws -> [ZoneResult] {
        try await run { e, c throws(StoreError) in try e.modifyZones(save: save, delete: delete, scope: scope, c) }
    }

    /// zones/modify with each saved zone's syncToken, in one request.
    public func modifyZonesAnswering(save: [ZoneID], delete: [ZoneID],
                                     scope: DatabaseScope) async throws -> [ZoneModifyAnswer] {
        try await run { e, c throws(StoreError) in
            try e.modifyZonesAnswering(save: save, delete: delete, scope: scope, c)
        }
    }

    public func listZones(scope: DatabaseScope) async throws -> [ZoneID] {
        try await run(.read) { e, c throws(StoreError) in try e.listZones(scope: scope, c) }
    }

    /// Every zone with its Zone Dictionary (zones/list), in one request.
    public func listZoneDictionaries(scope: DatabaseScope) async throws -> [ZoneLookupResult] {
        try await run(.read) { e, c throws(StoreError) in try e.listZoneDictionaries(scope: scope, c) }
    }

    public func modifySubscriptions(save: [Subscription], delete: [String],
                                    scope: DatabaseScope) async throws -> [SubscriptionResult] {
        try await run { e, c throws(StoreError) in try e.modifySubscriptions(save: save, delete: delete, scope: scope, c) }
    }

    public func listSubscriptions(scope: DatabaseScope) async throws -> [Subscription] {
        try await run(.read) { e, c throws(StoreError) in try e.listSubscriptions(scope: scope, c) }
    }

    public func createShare(zone: ZoneID, publicPermission: SharePermission,
                            participants: [String: SharePermission]) async throws -> ZoneShare {
        let shortGUID = ZoneShare.newShortGUID()
        return try await run { e, c throws(StoreError) in
            try e.createShare(zone: zone, publicPermission: publicPermission, participants: participants,
                              shortGUID: shortGUID, c)
        }
    }

    public func updateShare(zone: ZoneID, _ update: ShareUpdate) async throws -> ZoneShare {
        try await run { e, c throws(StoreError) in try e.updateShare(zone: zone, update, c) }
    }

    public func deleteShare(zone: ZoneID) async throws {
        try await run { e, c throws(StoreError) in try e.deleteShare(zone: zone, c) }
    }

    public func acceptShare(zone: ZoneID) async throws -> ZoneShare {
        try await run { e, c throws(StoreError) in try e.acceptShare(zone: zone, c) }
    }

    public func fetchShare(zone: ZoneID, scope: DatabaseScope) async throws -> ZoneShare {
        try await run(.read) { e, c throws(StoreError) in try e.fetchShare(zone: zone, scope: scope, c) }
    }

    public func notifications() async throws -> AsyncStream<PushNotification> {
        let stream = store.push.listen(user: userRecordName, deviceID: deviceID)
        try await run { e, c throws(StoreError) in try e.registerDevice(c) }
        return stream
    }
}
