import RecordStore
import TestSupport
import StoreServer
import StoreTestSupport
import ZoneCore

/// The stores the contract suite runs against. The remote client joins this list with the
/// store daemon; every contract test then runs against both.
enum ContractBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case embedded
    /// `zonertc store serve`'s daemon in-process on a loopback port, through `RemoteStoreClient`.
    case remote
    /// The daemon on the PostgreSQL backend (a throwaway cluster; trait `PostgreSQL`).
    case postgres
    /// Two daemons on one PostgreSQL database: every write through the first, every read and
    /// push stream through the second.
    case postgresTwoDaemons

    /// The PostgreSQL cases join when the trait is built and PostgreSQL is installed (or under CI,
    /// where a missing server fails them).
    static var allCases: [ContractBackend] {
        #if PostgreSQL
        if PostgresCluster.runnable { return [.embedded, .remote, .postgres, .postgresTwoDaemons] }
        #endif
        return [.embedded, .remote]
    }

    var description: String { rawValue }

    /// A fresh, empty store on a manual clock.
    func makeStore(configuration: StoreConfiguration = .default,
                   clock: ManualClock = ManualClock()) async throws -> ContractStore {
        switch self {
        case .embedded:
            var options = EmbeddedStore.Options.inMemoryForTests
            options.configuration = configuration
            let store = try EmbeddedStore(options: options, clock: clock)
            return ContractStore(
                clock: clock,
                makeClient: { user, device in store.client(user: user, deviceID: device) },
                pump: { store.pumpPush() },
                shutdown: { store.close() })
        case .remote:
            var options = EmbeddedStore.Options.inMemoryForTests
            options.configuration = configuration
            let store = try EmbeddedStore(options: options, clock: clock)
            let users = try UserRegistry(directory: nil)
            let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: true),
                                         options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            let endpoint = daemon.endpoint
            let served = ServedStore(daemon: daemon, store: store)
            return ContractStore(
                clock: clock,
                makeClient: { user, device in
                    var config = RemoteStoreClient.Configuration(endpoint: endpoint, token: try! users.add(user))
                    config.retry = .none
                    var client = RemoteStoreClient(configuration: config, userRecordName: user, deviceID: device)
                    client.retainer = served
                    return client
                },
                pump: { served.store.push.pump(now: clock.now()) },
                shutdown: {})
        case .postgres, .postgresTwoDaemons:
            #if PostgreSQL
            return try await makePostgresStore(configuration: configuration, clock: clock,
                                               daemons: self == .postgres ? 1 : 2)
            #else
            throw StoreError(.internalError, "built without the PostgreSQL trait")
            #endif
        }
    }
}

/// A store under test: clients for any user and device, its clock, and its push pump. The
/// store (and a daemon's threads) stop when the last copy of this value goes away.
struct ContractStore: Sendable {
    let clock: ManualClock
    let makeClient: @Sendable (String, String) -> any StoreClient
    let pump: @Sendable () async -> Int
    /// Brings every notification owed so far into the push hub before the clock moves (a
    /// PostgreSQL daemon reads them from the log; the others have them at once).
    let settle: @Sendable () async -> Void
    private let lifetime: Lifetime

    init(clock: ManualClock, makeClient: @escaping @Sendable (String, String) -> any StoreClient,
         pump: @escaping @Sendable () async -> Int, settle: @escaping @Sendable () async -> Void = {},
         shutdown: @escaping @Sendable () -> Void) {
        self.clock = clock
        self.makeClient = makeClient
        self.pump = pump
        self.settle = settle
        lifetime = Lifetime(shutdown)
    }

    private final class Lifetime: Sendable {
        let shutdown: @Sendable () -> Void
        init(_ shutdown: @escaping @Sendable () -> Void) { self.shutdown = shutdown }
        deinit { shutdown() }
    }

    func client(_ user: String, device: String = "device-1") -> any StoreClient { makeClient(user, device) }

    /// Moves the clock past every push latency and delivers what is due.
    @discardableResult
    func deliverPushes(after: Duration = .milliseconds(5)) async -> Int {
        await settle()
        clock.advance(by: after)
        return await pump()
    }
}

/// Builds a record in a zone.
func record(_ name: String, type: String = "Note", in zone: ZoneID = ZoneID(zoneName: "room_a"),
            _ fields: RecordFields = [:]) -> Record {
    Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: fields)
}

/// Runs `body` and returns the StoreError it threw, or nil.
func storeError(_ body: () async throws -> Void) async -> StoreError? {
    do { try await body(); return nil } catch let e as StoreError { return e } catch { return StoreError(.internalError, "\(error)") }
}
