#if PostgreSQL
import PostgresStore
import RecordStore
import StoreServer
import TestSupport
import ZoneCore

extension ContractBackend {
    /// One or two in-process daemons, each with its own `PostgresStore` (own connections, own
    /// replica of the log), on a fresh schema of the test process's throwaway cluster.
    func makePostgresStore(configuration: StoreConfiguration, clock: ManualClock,
                           daemons count: Int) async throws -> ContractStore {
        let cluster = try PostgresCluster.shared()
        let url = cluster.url(schema: try cluster.freshSchema())
        var served: [ServedStore] = []
        // Users are not the contract's subject: one in-memory registry serves both daemons
        // (`PostgresUserDirectory` has tests of its own with daemon processes).
        let users = try UserRegistry(directory: nil)
        for _ in 0..<count {
            var options = PostgresStore.Options(url: url)
            options.configuration = configuration
            options.automaticPush = false
            options.readers = 2
            let store = try await PostgresStore.open(options: options, clock: clock)
            let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: true),
                                         options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            served.append(ServedStore(daemon: daemon, store: store))
        }
        let writes = served[0], reads = served[served.count - 1]
        return ContractStore(
            clock: clock,
            makeClient: { user, device in
                let token = try! users.add(user)
                func remote(_ s: ServedStore) -> RemoteStoreClient {
                    var config = RemoteStoreClient.Configuration(endpoint: s.daemon.endpoint, token: token)
                    config.retry = .none
                    var client = RemoteStoreClient(configuration: config, userRecordName: user, deviceID: device)
                    client.retainer = s
                    return client
                }
                return count == 1 ? remote(writes) : SplitStoreClient(writes: remote(writes), reads: remote(reads))
            },
            pump: { reads.store.push.pump(now: clock.now()) },
            // The reading daemon reads the log now (as its listener would, a moment later).
            settle: { try? await (reads.store as? PostgresStore)?.synchronize() },
            shutdown: {})
    }
}

/// A client whose writes go to one daemon and whose reads and push stream come from another.
struct SplitStoreClient: StoreClient {
    let writes: RemoteStoreClient
    let reads: RemoteStoreClient

    var userRecordName: String { writes.userRecordName }
    var deviceID: String { writes.deviceID }

    func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope) async throws -> ModifyRecordsResult {
        try await writes.modifyRecords(request, scope: scope)
    }
    func lookupRecords(_ ids: [RecordID], scope: DatabaseScope) async throws -> [LookupResult] {
        try await reads.lookupRecords(ids, scope: scope)
    }
    func queryRecords(recordType: String, in zone: ZoneID, filters: [String: FieldValue],
                      scope: DatabaseScope) async throws -> [Record] {
        try await reads.queryRecords(recordType: recordType, in: zone, filters: filters, scope: scope)
    }
    func fetchZoneChanges(_ zone: ZoneID, since token: ChangeToken?, resultsLimit: Int?,
                          scope: DatabaseScope) async throws -> ZoneChanges {
        try await reads.fetchZoneChanges(zone, since: token, resultsLimit: resultsLimit, scope: scope)
    }
    func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int?,
                              scope: DatabaseScope) async throws -> DatabaseChanges {
        try await reads.fetchDatabaseChanges(since: token, resultsLimit: resultsLimit, scope: scope)
    }
    func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope) async throws -> [ZoneResult] {
        try await writes.modifyZones(save: save, delete: delete, scope: scope)
    }
    func listZones(scope: DatabaseScope) async throws -> [ZoneID] { try await reads.listZones(scope: scope) }
    func modifySubscriptions(save: [Subscription], delete: [String],
                             scope: DatabaseScope) async throws -> [SubscriptionResult] {
        try await writes.modifySubscriptions(save: save, delete: delete, scope: scope)
    }
    func listSubscriptions(scope: DatabaseScope) async throws -> [Subscription] {
        try await reads.listSubscriptions(scope: scope)
    }
    func createShare(zone: ZoneID, publicPermission: SharePermission,
                     participants: [String: SharePermission]) async throws -> ZoneShare {
        try await writes.createShare(zone: zone, publicPermission: publicPermission, participants: participants)
    }
    func updateShare(zone: ZoneID, _ update: ShareUpdate) async throws -> ZoneShare {
        try await writes.updateShare(zone: zone, update)
    }
    func deleteShare(zone: ZoneID) async throws { try await writes.deleteShare(zone: zone) }
    func acceptShare(zone: ZoneID) async throws -> ZoneShare { try await writes.acceptShare(zone: zone) }
    func fetchShare(zone: ZoneID, scope: DatabaseScope) async throws -> ZoneShare {
        try await reads.fetchShare(zone: zone, scope: scope)
    }
    func notifications() async throws -> AsyncStream<PushNotification> { try await reads.notifications() }
}
#endif
