// A store client for tests that splits a user's traffic: writes to one client, reads and the
// push stream to another (two daemons of one PostgreSQL store), or one store's client whose
// push channel a test replaces (a store that offers none).
import RecordStore

/// Writes through `writes`; reads, and push notifications unless `push` says otherwise, through
/// `reads`.
public struct RoutedStoreClient: StoreClient {
    public let writes: any StoreClient
    public let reads: any StoreClient
    private let push: @Sendable () async throws -> AsyncStream<PushNotification>

    /// A client writing through `writes` and reading through `reads`; `push`, when given, is the
    /// push stream instead of `reads`'.
    public init(writes: any StoreClient, reads: any StoreClient,
                push: (@Sendable () async throws -> AsyncStream<PushNotification>)? = nil) {
        self.writes = writes
        self.reads = reads
        self.push = push ?? { try await reads.notifications() }
    }

    public var userRecordName: String { writes.userRecordName }
    public var deviceID: String { writes.deviceID }

    public func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope) async throws
        -> ModifyRecordsResult
    {
        try await writes.modifyRecords(request, scope: scope)
    }
    public func lookupRecords(_ ids: [RecordID], scope: DatabaseScope) async throws -> [LookupResult] {
        try await reads.lookupRecords(ids, scope: scope)
    }
    public func queryRecords(recordType: String, in zone: ZoneID, filters: [String: FieldValue],
                             scope: DatabaseScope) async throws -> [Record] {
        try await reads.queryRecords(recordType: recordType, in: zone, filters: filters, scope: scope)
    }
    public func fetchZoneChanges(_ zone: ZoneID, since token: ChangeToken?, resultsLimit: Int?,
                                 scope: DatabaseScope) async throws -> ZoneChanges {
        try await reads.fetchZoneChanges(zone, since: token, resultsLimit: resultsLimit, scope: scope)
    }
    public func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int?,
                                     scope: DatabaseScope) async throws -> DatabaseChanges {
        try await reads.fetchDatabaseChanges(since: token, resultsLimit: resultsLimit, scope: scope)
    }
    public func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope) async throws -> [ZoneResult] {
        try await writes.modifyZones(save: save, delete: delete, scope: scope)
    }
    public func listZones(scope: DatabaseScope) async throws -> [ZoneID] { try await reads.listZones(scope: scope) }
    public func modifySubscriptions(save: [Subscription], delete: [String],
                                    scope: DatabaseScope) async throws -> [SubscriptionResult] {
        try await writes.modifySubscriptions(save: save, delete: delete, scope: scope)
    }
    public func listSubscriptions(scope: DatabaseScope) async throws -> [Subscription] {
        try await reads.listSubscriptions(scope: scope)
    }
    public func createShare(zone: ZoneID, publicPermission: SharePermission,
                            participants: [String: SharePermission]) async throws -> ZoneShare {
        try await writes.createShare(zone: zone, publicPermission: publicPermission, participants: participants)
    }
    public func updateShare(zone: ZoneID, _ update: ShareUpdate) async throws -> ZoneShare {
        try await writes.updateShare(zone: zone, update)
    }
    public func deleteShare(zone: ZoneID) async throws { try await writes.deleteShare(zone: zone) }
    public func acceptShare(zone: ZoneID) async throws -> ZoneShare { try await writes.acceptShare(zone: zone) }
    public func fetchShare(zone: ZoneID, scope: DatabaseScope) async throws -> ZoneShare {
        try await reads.fetchShare(zone: zone, scope: scope)
    }
    public func notifications() async throws -> AsyncStream<PushNotification> { try await push() }
}
