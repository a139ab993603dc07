import ZoneCore

/// The record store as one signed-in user on one device sees it: what a peer uses.
///
/// Every method throws `StoreError`. The embedded client calls the engine in-process; the
/// remote client speaks HTTP to `zonertc store serve`. Both pass the same contract suite.
public protocol StoreClient: Sendable {
    var userRecordName: String { get }
    var deviceID: String { get }

    func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope) async throws -> ModifyRecordsResult
    func lookupRecords(_ ids: [RecordID], scope: DatabaseScope) async throws -> [LookupResult]
    func queryRecords(recordType: String, in zone: ZoneID, filters: [String: FieldValue],
                      scope: DatabaseScope) async throws -> [Record]
    func fetchZoneChanges(_ zone: ZoneID, since token: ChangeToken?, resultsLimit: Int?,
                          scope: DatabaseScope) async throws -> ZoneChanges
    func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int?,
                              scope: DatabaseScope) async throws -> DatabaseChanges
    func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope) async throws -> [ZoneResult]
    func listZones(scope: DatabaseScope) async throws -> [ZoneID]
    func modifySubscriptions(save: [Subscription], delete: [String],
                             scope: DatabaseScope) async throws -> [SubscriptionResult]
    func listSubscriptions(scope: DatabaseScope) async throws -> [Subscription]
    func createShare(zone: ZoneID, publicPermission: SharePermission,
                     participants: [String: SharePermission]) async throws -> ZoneShare
    func updateShare(zone: ZoneID, _ update: ShareUpdate) async throws -> ZoneShare
    func deleteShare(zone: ZoneID) async throws
    func acceptShare(zone: ZoneID) async throws -> ZoneShare
    func fetchShare(zone: ZoneID, scope: DatabaseScope) async throws -> ZoneShare
    /// Registers this device for push and returns the notifications delivered to it from now on.
    func notifications() async throws -> AsyncStream<PushNotification>
}

extension StoreClient {
    /// Saves records as the CloudKit framework's `CKDatabase.save` does (`SavePolicy`: created when
    /// they carry no change tag, replaced over the version their tag names), throwing the first
    /// record's error (convenience).
    @discardableResult
    public func save(_ records: [Record], scope: DatabaseScope = .private,
                     policy: SavePolicy = .ifServerRecordUnchanged) async throws -> [Record] {
        let result = try await modifyRecords(ModifyRecordsRequest(saves: records, savePolicy: policy), scope: scope)
        if let (_, error) = result.failures.first { throw error }
        return result.savedRecords
    }

    /// Every change of a zone since `token`, following `moreComing` to the end.
    public func fetchAllZoneChanges(_ zone: ZoneID, since token: ChangeToken?, scope: DatabaseScope,
                                    resultsLimit: Int? = nil) async throws -> ZoneChanges {
        var page = try await fetchZoneChanges(zone, since: token, resultsLimit: resultsLimit, scope: scope)
        var all = page
        while page.moreComing {
            page = try await fetchZoneChanges(zone, since: page.syncToken, resultsLimit: resultsLimit, scope: scope)
            all.changed.append(contentsOf: page.changed)
            all.deleted.append(contentsOf: page.deleted)
            all.syncToken = page.syncToken
        }
        all.moreComing = false
        return all
    }
}
