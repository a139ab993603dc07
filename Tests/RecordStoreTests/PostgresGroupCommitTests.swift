#if PostgreSQL
import Foundation
@testable import PostgresStore
import RecordStore
import Testing
import TestSupport
import ZoneCore

/// Group commit: a small batch waits for writes expected soon (this daemon's writes committed and
/// not yet answered), never for writes nobody has reason to expect, and never longer than its delay.
@Suite("PostgreSQL: group commit")
struct GroupCommitPolicyTests {
    @Test("a batch waits only for writes it expects, for at most as many as it expects, up to its size")
    func target() {
        let policy = GroupCommit(delay: .microseconds(800), size: 8)
        // A lone writer: nothing in flight, nothing to wait for.
        #expect(policy.target(batch: 1, expected: 0, limit: 512) == 1)
        #expect(policy.target(batch: 1, expected: 3, limit: 512) == 4)
        #expect(policy.target(batch: 2, expected: 30, limit: 512) == 8)
        // Already large enough, or at the batch limit.
        #expect(policy.target(batch: 8, expected: 30, limit: 512) == 8)
        #expect(policy.target(batch: 12, expected: 30, limit: 512) == 12)
        #expect(policy.target(batch: 3, expected: 30, limit: 5) == 5)
        #expect(policy.target(batch: 5, expected: 30, limit: 5) == 5)
        // Counts that would overflow a sum saturate instead of trapping.
        #expect(GroupCommit(delay: .seconds(1), size: .max).target(batch: 2, expected: .max, limit: .max) == .max)
        // Off: never waits.
        #expect(GroupCommit.off.target(batch: 1, expected: 30, limit: 512) == 1)
        #expect(GroupCommit(delay: .zero, size: 64).target(batch: 1, expected: 30, limit: 512) == 1)
    }

    @Test("writers answered a moment ago are expected back until they write or the window passes")
    func returningWriters() {
        let alice = WriterKey(user: "alice", device: "phone"), bob = WriterKey(user: "bob", device: "phone")
        var returning = ReturningWriters()
        #expect(returning.expected(at: 0, window: 1000) == 0)
        returning.answered([alice, bob, nil], at: 10_000)
        #expect(returning.expected(at: 10_500, window: 1000) == 2)
        // Alice wrote again: only Bob is still expected. A device of another user is another writer.
        returning.arrived(alice)
        returning.arrived(WriterKey(user: "carol", device: "phone"))
        returning.arrived(nil)
        #expect(returning.expected(at: 10_500, window: 1000) == 1)
        // Bob never wrote: after the window he is not waited for again.
        #expect(returning.expected(at: 11_001, window: 1000) == 0)
        returning.answered([alice], at: 20_000)
        returning.answered([alice], at: 20_400)
        #expect(returning.expected(at: 21_300, window: 1000) == 1)
        // A clock read across threads may run a little behind the last answer: not a trap.
        #expect(returning.expected(at: 19_000, window: 1000) == 0)
    }

    @Test("gathering takes what is queued up to the target without waiting, and never past the limit")
    func gatherQueued() {
        let queue = BatchQueue<Int>()
        for i in 0..<10 { #expect(queue.enqueue(i)) }
        var batch = [100]
        // The deadline is far away: returning at all shows it did not wait for it.
        #expect(queue.gather(into: &batch, target: 4, limit: 6, deadline: .distantFuture) == 5)
        #expect(batch == [100, 0, 1, 2, 3, 4])
        #expect(queue.take(limit: 100, wait: 0) == [5, 6, 7, 8, 9])
    }

    @Test("gathering stops at its deadline with what arrived, and at once when the queue stops")
    func gatherDeadlineAndStop() {
        let queue = BatchQueue<Int>()
        _ = queue.enqueue(1)
        var batch: [Int] = []
        #expect(queue.gather(into: &batch, target: 5, limit: 10, deadline: Date(timeIntervalSinceNow: -1)) == 1)
        #expect(batch == [1])
        queue.stop()
        var after: [Int] = []
        #expect(queue.gather(into: &after, target: 5, limit: 10, deadline: .distantFuture) == 0)
        #expect(after.isEmpty)
    }

    @Test("a waiting gather returns as soon as the target is reached by writes queued from another thread")
    func gatherWakesOnTarget() {
        let queue = BatchQueue<Int>()
        let producer = Thread { for i in 0..<3 { _ = queue.enqueue(i) } }
        producer.start()
        var batch = [9]
        let moved = queue.gather(into: &batch, target: 4, limit: 10, deadline: Date(timeIntervalSinceNow: 60))
        #expect(moved == 3)
        #expect(batch == [9, 0, 1, 2])
    }
}

@Suite("PostgreSQL: group commit on a real database", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresGroupCommitTests {
    let zone = ZoneID(zoneName: "room_group")

    func open(_ groupCommit: GroupCommit) async throws -> PostgresStore {
        let cluster = try PostgresCluster.shared()
        var options = PostgresStore.Options(url: cluster.url(schema: try cluster.freshSchema()))
        options.groupCommit = groupCommit
        options.automaticPush = false
        return try await PostgresStore.open(options: options)
    }

    func note(_ name: String) -> Record {
        Record(recordType: "Note", id: RecordID(recordName: name, zoneID: zone), fields: ["n": .string(name)])
    }

    @Test("one writer after another never waits, however long the delay")
    func loneWriterNeverWaits() async throws {
        // A batch held open even once would make this test take 20 s and fail on the counters.
        let store = try await open(GroupCommit(delay: .seconds(20), size: 64))
        defer { store.close() }
        let client = store.client(user: "alice", deviceID: "d")
        _ = try await client.modifyZones(save: [zone], delete: [], scope: .private)
        for i in 0..<20 { try await client.save([note("serial-\(i)")]) }
        let counters = store.counters
        #expect(counters.writes == 21)
        #expect(counters.timings.batchesHeldOpen == 0)
        #expect(counters.timings.writesGathered == 0)
    }

    @Test("a batch waits for a write while another is unanswered, and commits as soon as it arrives")
    func heldOpenUntilTheExpectedWrite() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        var options = PostgresStore.Options(url: cluster.url(schema: schema))
        // A write held for the whole minute would show in `gatherNanos` below.
        options.groupCommit = GroupCommit(delay: .seconds(60), size: 2)
        options.automaticPush = false
        let store = try await PostgresStore.open(options: options)
        defer { store.close() }
        let client = store.client(user: "alice", deviceID: "d")
        _ = try await client.modifyZones(save: [zone], delete: [], scope: .private)

        // Another session holds the durable mark: writes commit but stay unanswered (in flight).
        let blocker = try PostgresConnection(url: cluster.url(schema: schema))
        defer { blocker.close() }
        _ = try blocker.execute("BEGIN")
        _ = try blocker.execute("LOCK TABLE zonertc_durable IN EXCLUSIVE MODE")
        let first = Task { try await client.save([note("first")]) }
        try #require(try cluster.answers("SELECT count(*) FROM \(schema).zonertc_log", "2"),
                     "the first write did not commit")

        // The second write finds the first unanswered: its batch waits for one more write.
        let second = Task { try await client.save([note("second")]) }
        let limit = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < limit && (store.counters.writes < 2 || store.writes.count > 0) {
            await Task.yield()
        }
        try #require(store.writes.count == 0, "the writer did not take the second write")
        #expect(try cluster.sql("SELECT count(*) FROM \(schema).zonertc_log") == "2", "a held batch committed")
        let third = Task { try await client.save([note("third")]) }
        try #require(try cluster.answers("SELECT count(*) FROM \(schema).zonertc_log", "3"),
                     "the held batch did not commit when the write it waited for arrived")
        _ = try blocker.execute("COMMIT")
        for task in [first, second, third] { try await task.value }

        let counters = store.counters
        #expect(counters.batches == 3)
        #expect(counters.writes == 4)
        #expect(counters.timings.batchesHeldOpen == 1)
        #expect(counters.timings.writesGathered == 1)
        #expect(counters.timings.gatherNanos < 30_000_000_000)
    }

    @Test("concurrent writers lose nothing, grouped or not", arguments: [
        GroupCommit(delay: .milliseconds(200), size: 16), GroupCommit.off,
    ])
    func concurrentWriters(_ policy: GroupCommit) async throws {
        let store = try await open(policy)
        defer { store.close() }
        let setup = store.client(user: "alice", deviceID: "setup")
        _ = try await setup.modifyZones(save: [zone], delete: [], scope: .private)
        let writers = 16, each = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                let client = store.client(user: "alice", deviceID: "w\(w)")
                group.addTask { for i in 0..<each { try await client.save([note("w\(w)-\(i)")]) } }
            }
            try await group.waitForAll()
        }
        let counters = store.counters
        #expect(counters.writes == writers * each + 1)
        if policy == .off { #expect(counters.timings.batchesHeldOpen == 0) }
        let fetched = try await setup.fetchAllZoneChanges(zone, since: nil, scope: .private)
        #expect(Set(fetched.changed.map(\.id.recordName)).count == writers * each)
    }
}
#endif
