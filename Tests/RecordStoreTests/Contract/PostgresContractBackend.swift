#if PostgreSQL
import PostgresStore
import RecordStore
import StoreServer
import StoreTestSupport
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
                return count == 1 ? remote(writes) : RoutedStoreClient(writes: remote(writes), reads: remote(reads))
            },
            pump: { reads.store.push.pump(now: clock.now()) },
            // The reading daemon reads the log now (as its listener would, a moment later).
            settle: { try? await (reads.store as? PostgresStore)?.synchronize() },
            shutdown: {})
    }
}
#endif
