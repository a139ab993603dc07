import Foundation
import Glibc
import Net
import RecordStore
import StoreServer
import Synchronization
import Testing
import TestSupport
import ZoneCore

/// The daemon's event loop never waits for the store: with every worker thread stuck inside the
/// store (as behind a journal sync, a compaction or a lock held elsewhere) the loop still accepts,
/// answers `/health`, reports its counters and sheds, and the stuck requests are answered once the
/// store moves again.
@Suite("Store daemon: the loop never waits for the store")
struct DaemonLoopTests {
    /// Blocks the thread of every write while closed: a thread stuck in the store, not a task waiting.
    final class StuckStore: StoreBackend, @unchecked Sendable {
        let inner: EmbeddedStore
        private let condition = NSCondition()
        private var closed = false
        let stuck = Atomic<Int>(0)

        init(_ inner: EmbeddedStore) { self.inner = inner }
        var push: PushHub { inner.push }
        var clock: any InstantSource { inner.clock }

        func hold() { condition.lock(); closed = true; condition.unlock() }

        /// Blocks the calling thread (a worker of the daemon) until `release`.
        private func waitWhileHeld() {
            condition.lock()
            if closed { stuck.add(1, ordering: .relaxed) }
            while closed { condition.wait() }
            condition.unlock()
        }

        func release() {
            condition.lock()
            closed = false
            condition.broadcast()
            condition.unlock()
        }

        func perform<T: Sendable>(
            user: String, deviceID: String?, access: StoreAccess,
            _ operation: @escaping @Sendable (inout StoreEngine, RequestContext) throws(StoreError) -> T
        ) async throws -> T {
            if access == .write { waitWhileHeld() }
            return try await inner.perform(user: user, deviceID: deviceID, access: access, operation)
        }

        func inspection() async throws -> StoreInspection { try await inner.inspection() }
        func close() { inner.close() }
    }

    @Test("every worker stuck in the store: the loop still accepts, answers /health and its counters")
    func loopAnswersWhileWorkersAreStuck() async throws {
        let store = StuckStore(try EmbeddedStore(options: EmbeddedStore.Options()))
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        var options = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
        options.workers = 2
        options.summaryInterval = nil
        let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false), options: options)
        try daemon.start()
        defer { daemon.stop(); store.close() }
        let zone = ZoneID(zoneName: "Z", ownerName: "alice")
        let client = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                       userRecordName: "alice", deviceID: "d")
        _ = try await client.modifyZones(save: [zone], delete: [], scope: .private)

        store.hold()
        let saves = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<4 {
                    group.addTask {
                        let record = Record(recordType: "Note", id: RecordID(recordName: "r\(i)", zoneID: zone))
                        _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [record], savePolicy: .allKeys),
                                                           scope: .private)
                    }
                }
                try await group.waitForAll()
            }
        }
        let bothStuck = await finishes(within: .seconds(10)) {
            while store.stuck.load(ordering: .relaxed) < 2 { sched_yield() }
        }
        let inFlight = await daemon.currentCounters().requestsInFlight
        #expect(bothStuck, "\(store.stuck.load(ordering: .relaxed)) saves reached the store, \(inFlight) in flight")

        let health = try await rawHealthAnswer(from: daemon.endpoint)
        #expect(health.hasPrefix("HTTP/1.1 200"), "\(health)")
        let counters = await daemon.currentCounters()
        #expect(counters.requestsInFlight == 4)

        store.release()
        try await saves.value
        let found = try await client.lookupRecords((0..<4).map { RecordID(recordName: "r\($0)", zoneID: zone) },
                                                   scope: .private)
        #expect(found.allSatisfy { if case .found = $0 { true } else { false } })
        #expect(await daemon.currentCounters().requestsInFlight == 0)
    }
}
