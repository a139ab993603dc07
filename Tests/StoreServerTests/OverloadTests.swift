import Foundation
import Glibc
import Net
import RecordStore
import StoreServer
import Synchronization
import Testing
import TestSupport
import ZoneCore

/// The daemon at twice its capacity: it sheds with 503 `TRY_AGAIN_LATER` and `retryAfter` at once,
/// keeps open push streams, answers while shedding, recovers by itself, and loses nothing it
/// acknowledged.
@Suite("Store daemon overload")
struct OverloadTests {
    /// Holds writes until opened, so requests pile up in flight as they would behind a slow disk.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((true, []))
        let arrived = Atomic<Int>(0)

        func close() { state.withLock { $0.open = false } }

        func open() {
            let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }
            for w in waiting { w.resume() }
        }

        func pass() async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let wait = state.withLock { s -> Bool in
                    if s.open { return false }
                    s.waiting.append(c)
                    return true
                }
                arrived.add(1, ordering: .relaxed)
                if !wait { c.resume() }
            }
        }
    }

    final class Outcomes: Sendable {
        let all = Mutex<[String: Result<Void, StoreError>]>([:])
    }

    final class GatedStore: StoreBackend {
        let inner: EmbeddedStore
        let gate = Gate()
        init(_ inner: EmbeddedStore) { self.inner = inner }
        var push: PushHub { inner.push }
        var clock: any InstantSource { inner.clock }
        func perform<T: Sendable>(
            user: String, deviceID: String?, access: StoreAccess,
            _ operation: @escaping @Sendable (inout StoreEngine, RequestContext) throws(StoreError) -> T
        ) async throws -> T {
            await gate.pass()
            return try await inner.perform(user: user, deviceID: deviceID, access: access, operation)
        }
        func inspection() async throws -> StoreInspection { try await inner.inspection() }
        func close() { inner.close() }
    }

    @Test("twice the requests in flight: the excess gets 503 TRY_AGAIN_LATER with retryAfter, streams live on")
    func shedsAndRecovers() async throws {
        let capacity = 8
        var embedded = EmbeddedStore.Options()
        embedded.pushProfile = .lan
        let store = GatedStore(try EmbeddedStore(options: embedded))
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        var options = StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0"))
        options.maxRequestsInFlight = capacity
        options.summaryInterval = nil
        let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false), options: options)
        try daemon.start()
        defer { daemon.stop(); store.close() }
        @Sendable func client(_ device: String) -> RemoteStoreClient {
            var configuration = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: token)
            configuration.retry = .none
            return RemoteStoreClient(configuration: configuration, userRecordName: "alice", deviceID: device)
        }
        let zone = ZoneID(zoneName: "Z", ownerName: "alice")
        _ = try await client("setup").modifyZones(save: [zone], delete: [], scope: .private)
        _ = try await client("setup").modifySubscriptions(
            save: [Subscription(subscriptionID: "all", kind: .database)], delete: [], scope: .private)
        let stream = try await client("listener").notifications()
        var notifications = stream.makeAsyncIterator()

        @Sendable func save(_ name: String, _ device: String) async -> Result<Void, StoreError> {
            let record = Record(recordType: "Note", id: RecordID(recordName: name, zoneID: zone))
            do {
                let result = try await client(device).modifyRecords(
                    ModifyRecordsRequest(saves: [record], savePolicy: .allKeys), scope: .private)
                if case .failed(_, let e) = result.results.first { return .failure(e) }
                return .success(())
            } catch let e as StoreError {
                return .failure(e)
            } catch {
                return .failure(StoreError(.internalError, "\(error)"))
            }
        }

        // Twice the capacity at once, while the store holds every write.
        store.gate.close()
        let before = store.gate.arrived.load(ordering: .relaxed)
        let outcomes = Outcomes()
        let group = Task {
            await withTaskGroup(of: Void.self) { group in
                for i in 0..<(2 * capacity) {
                    group.addTask {
                        let r = await save("burst\(i)", "d\(i)")
                        outcomes.all.withLock { $0["burst\(i)"] = r }
                    }
                }
            }
        }
        // The excess is answered at once, while the first `capacity` wait at the gate.
        let shedInTime = await finishes(within: .seconds(10)) {
            while outcomes.all.withLock({ $0.count }) < capacity
                    || store.gate.arrived.load(ordering: .relaxed) - before < capacity {
                sched_yield()
            }
        }
        #expect(shedInTime, "the excess was not answered while the store was busy")
        let shed = outcomes.all.withLock { $0.values.compactMap { r -> StoreError? in
            if case .failure(let e) = r { return e } else { return nil }
        } }
        #expect(shed.count == capacity)
        #expect(shed.allSatisfy { $0.code == .serviceUnavailable && $0.retryAfter == 1 }, "\(shed)")
        // Still answering while full: health, and more shedding rather than queueing.
        let health = try await rawHealthAnswer(from: daemon.endpoint)
        #expect(health.hasPrefix("HTTP/1.1 200"), "\(health)")
        let counters = await daemon.currentCounters()
        #expect(counters.shed == capacity)
        #expect(counters.requestsInFlight == capacity)
        #expect(counters.openStreams == 1)

        // The load drops: the held writes finish, and new ones go through without anyone resetting anything.
        store.gate.open()
        await group.value
        let acknowledged = outcomes.all.withLock { $0.filter { if case .success = $0.value { true } else { false } }.keys }
        #expect(acknowledged.count == capacity)
        let after = await save("after", "late")
        #expect((try? after.get()) != nil, "\(after)")
        // The stream opened before the overload still delivers.
        #expect(await notifications.next() != nil)
        // Nothing acknowledged was lost.
        let ids = (Array(acknowledged) + ["after"]).map { RecordID(recordName: $0, zoneID: zone) }
        let found = try await client("reader").lookupRecords(ids, scope: .private)
        #expect(found.allSatisfy { if case .found = $0 { true } else { false } }, "\(found)")
        let final = await daemon.currentCounters()
        #expect(final.requestsInFlight == 0)
        #expect(final.shed == capacity)
    }
}
