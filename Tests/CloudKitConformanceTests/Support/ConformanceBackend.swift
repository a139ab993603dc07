// The stores the conformance suite runs against, each started once per test process and shared by
// every test (each test works as a user of its own): the JSON API called in-process over the
// embedded engine, the daemon over loopback HTTP, and two daemons on one PostgreSQL database.
import Foundation
import Net
import RecordStore
import StoreTestSupport
@testable import StoreServer
import Synchronization
import TestSupport
import ZoneCore
#if PostgreSQL
import PostgresStore
#endif

enum ConformanceBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `StoreAPI.handle` in-process over `EmbeddedStore`: the JSON API without a socket.
    case embedded
    /// `zonertc store serve`'s daemon on a loopback port, over `EmbeddedStore`.
    case daemon
    /// Two daemons on one PostgreSQL database: writes through the first, reads through the second.
    case postgres

    /// PostgreSQL joins when the trait is built and PostgreSQL is installed (or under CI, where a
    /// missing server fails it).
    static var allCases: [ConformanceBackend] {
        #if PostgreSQL
        if PostgresCluster.runnable { return [.embedded, .daemon, .postgres] }
        #endif
        return [.embedded, .daemon]
    }

    var description: String { rawValue }

    private static let servers = Mutex<[ConformanceBackend: ConformanceServer]>([:])

    /// The backend's server, started on first use.
    func server() async throws -> ConformanceServer {
        if let running = Self.servers.withLock({ $0[self] }) { return running }
        let started = try await ConformanceServer.start(self)
        return Self.servers.withLock { servers in
            if let other = servers[self] { return other }
            servers[self] = started
            return started
        }
    }

    /// A new user of this backend's server.
    func user(device: String = "conformance-device") async throws -> ConformanceUser {
        try await server().newUser(device: device)
    }
}

/// One running store and how to reach it.
final class ConformanceServer: Sendable {
    /// Sends a request; `write` picks the writing daemon where there are two.
    typealias Send = @Sendable (_ method: String, _ path: String, _ headers: [(String, String)], _ body: [UInt8],
                                _ write: Bool) async throws -> Reply
    /// Sends a request and gives the raw answer (an asset's bytes are no JSON).
    typealias RawSend = @Sendable (_ method: String, _ target: String, _ headers: [(String, String)], _ body: [UInt8],
                                   _ write: Bool) async throws -> RawResponse
    let users: UserRegistry
    private let send: Send
    private let rawSend: RawSend
    /// The daemons' addresses (empty in process), writing daemon first.
    let endpoints: [Endpoint]
    /// What keeps the stores and daemons alive (the process ends with them).
    private let retained: [any Sendable]
    private let created = Atomic<Int>(0)
    /// The stores' clock, which push delivery follows (`deliverPushes`).
    let clock: ManualClock
    /// The stores, writing daemon's first: each has the push hub its daemon's streams listen on.
    let stores: [any StoreBackend]

    private init(users: UserRegistry, send: @escaping Send, raw: @escaping RawSend, endpoints: [Endpoint] = [],
                 clock: ManualClock, stores: [any StoreBackend], retained: [any Sendable]) {
        self.users = users
        self.send = send
        self.rawSend = raw
        self.endpoints = endpoints
        self.clock = clock
        self.stores = stores
        self.retained = retained
    }

    /// A push stream of `user`'s `device` on the store that answers reads (the second daemon on
    /// PostgreSQL), opened as the daemon opens `GET …/push`: the device registered, then its hub listened to.
    func pushStream(user: String, device: String) async throws -> AsyncStream<PushNotification> {
        let store = stores[stores.count - 1]
        try await store.perform(user: user, deviceID: device, access: .write) { e, ctx throws(StoreError) in
            try e.registerDevice(ctx)
        }
        return store.push.listen(user: user, deviceID: device)
    }

    /// Delivers every notification owed so far: each PostgreSQL daemon reads the log now (as its
    /// listener would, a moment later), the clock passes the push profile's latency, every hub pumps.
    func deliverPushes() async {
        #if PostgreSQL
        for case let store as PostgresStore in stores { try? await store.synchronize() }
        #endif
        clock.advance(by: .milliseconds(5))
        for store in stores { store.push.pump(now: clock.now()) }
    }

    func newUser(device: String) throws -> ConformanceUser {
        let n = created.add(1, ordering: .relaxed).newValue
        let name = "u\(n)"
        return ConformanceUser(name: name, token: try users.add(name), device: device, server: self)
    }

    func request(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8],
                 write: Bool) async throws -> Reply {
        try await send(method, path, headers, body, write)
    }

    func raw(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
             write: Bool) async throws -> RawResponse {
        try await rawSend(method, target, headers, body, write)
    }

    /// How long a webcourier poll waits here: long enough for a test to see it wait, short enough to
    /// keep the suite fast.
    static let webcourierTimeout: Duration = .milliseconds(300)

    /// The server-to-server key every backend declares, in builds with OpenSSL.
    static let serverKeys: ServerKeys = {
        #if WebRTC
        guard let verifier = try? ECDSAP256Verifier(pem: TestSigningKey.shared.publicPEM) else { return ServerKeys() }
        return ServerKeys([ConformanceUser.serverKeyID: verifier], user: ConformanceUser.serverKeyUser)
        #else
        return ServerKeys()
        #endif
    }()

    /// The JSON API as every backend serves it: registration closed, the suite's API token declared.
    private static func makeAPI(_ store: any StoreBackend, _ users: UserRegistry,
                                assets: (any AssetStorage)? = try? AssetFiles.temporary()) -> StoreAPI {
        var courier = Webcourier.Options()
        courier.timeout = webcourierTimeout
        return StoreAPI(store: store, users: users, allowRegister: false,
                        apiTokens: APITokens([ConformanceUser.apiToken]), serverKeys: serverKeys, webcourier: courier,
                        assets: assets)
    }

    static func start(_ backend: ConformanceBackend) async throws -> ConformanceServer {
        let users = try UserRegistry(directory: nil)
        let clock = ManualClock()
        switch backend {
        case .embedded:
            var options = EmbeddedStore.Options.inMemoryForTests
            options.configuration = .default
            let store = try EmbeddedStore(options: options, clock: clock)
            let api = makeAPI(store, users)
            return ConformanceServer(users: users, send: { method, path, headers, body, _ in
                guard case .response(let r) = await api.handle(
                    HTTPRequest(method: method, target: path, headers: HTTPHeaders(headers), body: body)) else {
                    throw StoreError(.internalError, "\(path) opened a stream")
                }
                return try Reply(status: r.status, body: r.body)
            }, raw: { method, target, headers, body, _ in
                guard case .response(let r) = await api.handle(
                    HTTPRequest(method: method, target: target, headers: HTTPHeaders(headers), body: body)) else {
                    throw StoreError(.internalError, "\(target) opened a stream")
                }
                return RawResponse(status: r.status, headers: r.headers, body: r.body)
            }, clock: clock, stores: [store], retained: [store, api])
        case .daemon:
            let store = try EmbeddedStore(options: .inMemoryForTests, clock: clock)
            let daemon = try StoreDaemon(api: makeAPI(store, users),
                                         options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            let pool = ConnectionPool(endpoint: daemon.endpoint)
            return ConformanceServer(users: users, send: { method, path, headers, body, _ in
                try await Reply(pool.send(method: method, path: path, headers: headers, body: body,
                                          timeoutMilliseconds: 30_000))
            }, raw: { method, target, headers, body, _ in
                try await rawHTTP(daemon.endpoint, method, target, headers: headers, body: body)
            }, endpoints: [daemon.endpoint], clock: clock, stores: [store],
               retained: [ServedStore(daemon: daemon, store: store)])
        case .postgres:
            #if PostgreSQL
            let cluster = try PostgresCluster.shared()
            let url = cluster.url(schema: try cluster.freshSchema())
            var served: [ServedStore] = []
            for _ in 0..<2 {
                var options = PostgresStore.Options(url: url)
                options.automaticPush = false
                options.readers = 2
                let store = try await PostgresStore.open(options: options, clock: clock)
                let api = makeAPI(store, users, assets: PostgresAssets(store: store))
                // Each daemon has looked at the tokens registered before it started, so a token the
                // tests register later is never taken for one a restart may have cut off.
                await api.webcourier.ready()
                let daemon = try StoreDaemon(api: api,
                                             options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
                try daemon.start()
                served.append(ServedStore(daemon: daemon, store: store))
            }
            let endpoints = served.map(\.daemon.endpoint)
            let writes = ConnectionPool(endpoint: served[0].daemon.endpoint)
            let reads = ConnectionPool(endpoint: served[1].daemon.endpoint)
            return ConformanceServer(users: users, send: { method, path, headers, body, write in
                try await Reply((write ? writes : reads).send(method: method, path: path, headers: headers, body: body,
                                                              timeoutMilliseconds: 30_000))
            }, raw: { method, target, headers, body, write in
                try await rawHTTP(endpoints[write ? 0 : 1], method, target, headers: headers, body: body)
            }, endpoints: endpoints, clock: clock, stores: served.map(\.store), retained: served)
            #else
            throw StoreError(.internalError, "built without the PostgreSQL trait")
            #endif
        }
    }
}
