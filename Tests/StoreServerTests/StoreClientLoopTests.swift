import Foundation
import Net
import RecordStore
@testable import StoreServer
import Testing
import ZoneCore

/// The store client on its event loop (`StoreClientLoop`): connections belong to their pool (a
/// dropped client's are closed, not kept open by the loop), and what a full daemon sends on a
/// fresh connection is read as its answer.
@Suite("Store client on its event loop", .serialized)
struct StoreClientLoopTests {
    struct Served {
        let daemon: StoreDaemon
        let store: EmbeddedStore
        let token: String
    }

    func serve(perAddress: Int) throws -> Served {
        let store = try EmbeddedStore(options: .inMemoryForTests)
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        var options = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
        options.maxConnectionsPerAddress = perAddress
        options.evictableAfterIdle = .seconds(3600)
        let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false), options: options)
        try daemon.start()
        return Served(daemon: daemon, store: store, token: token)
    }

    func client(_ s: Served) -> RemoteStoreClient {
        var config = RemoteStoreClient.Configuration(endpoint: s.daemon.endpoint, token: s.token)
        config.retry = .none
        return RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: "d")
    }

    @Test("forty clients one after another, each dropped after a request, never hold more than the cap of 4")
    func droppedClientsCloseTheirConnections() async throws {
        let s = try serve(perAddress: 4)
        defer { s.daemon.stop(); s.store.close() }
        for _ in 0..<40 {
            // Kept alive by its loop, a dropped client's connection would fill the cap by the fifth.
            _ = try await client(s).listZones(scope: .private)
        }
    }

    @Test("a daemon that is full answers a fresh connection with 503 before the request: that is the error")
    func fullDaemonsRefusalIsTheAnswer() async throws {
        let s = try serve(perAddress: 1)
        defer { s.daemon.stop(); s.store.close() }
        let first = client(s)
        _ = try await first.listZones(scope: .private)
        // `first` keeps its connection idle in its pool: the only one allowed.
        let error = await #expect(throws: StoreError.self) { _ = try await client(s).listZones(scope: .private) }
        #expect(error?.code == .serviceUnavailable)
        #expect(error?.message.contains("too many connections") == true, "\(String(describing: error))")
        _ = try await first.listZones(scope: .private)
    }

    @Test("a request from a task on an event loop is made on that loop; its connection stays there, others get their own")
    func requestsOnTheCallersLoop() async throws {
        let s = try serve(perAddress: 4)
        defer { s.daemon.stop(); s.store.close() }
        let loop = try EventLoop(name: "caller-loop-test")
        loop.start()
        defer { loop.stop() }
        let c = client(s)
        for _ in 0..<2 {
            let onLoop = try await Task(executorPreference: loop) { () async throws -> Bool in
                _ = try await c.listZones(scope: .private)
                return EventLoop.current === loop && loop.inLoop
            }.value
            #expect(onLoop)
        }
        #expect(EventLoop.current == nil)
        // Off any loop the client's own loop serves: the connection the caller's loop watches is not taken.
        _ = try await c.listZones(scope: .private)
        _ = try await c.listZones(scope: .private)
        #expect(await s.daemon.currentCounters().accepted == 2)
        // The caller's loop ends (a call's driver that finished): its connection is dropped, not reused.
        loop.stop()
        _ = try await c.listZones(scope: .private)
        #expect(await s.daemon.currentCounters().accepted == 2)
    }
}
