#if PostgreSQL
import PostgresStore
import RecordStore
import StoreServer
import StoreTestSupport
import Testing
import TestSupport
import ZoneCore

/// Compaction of the PostgreSQL backend's shared log: a snapshot takes the place of the entries
/// before it, and daemons (one running, one starting afterwards) serve the same store as before.
@Suite("PostgreSQL: compacting the shared log", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresCompactionTests {
    let zone = ZoneID(zoneName: "room_compact")

    /// A daemon with its own `PostgresStore` on `url` (no automatic compaction) and a client of it.
    func serve(_ url: String, _ users: UserRegistry, _ token: String) async throws -> ServedStore {
        var options = PostgresStore.Options(url: url)
        options.compactionInterval = nil
        let store = try await PostgresStore.open(options: options)
        let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false),
                                     options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
        try daemon.start()
        return ServedStore(daemon: daemon, store: store)
    }

    func client(_ s: ServedStore, _ token: String) -> RemoteStoreClient {
        var config = RemoteStoreClient.Configuration(endpoint: s.daemon.endpoint, token: token)
        config.retry = .none
        return RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: "d")
    }

    func note(_ name: String) -> Record { Record(recordType: "Note", id: RecordID(recordName: name, zoneID: zone)) }

    @Test("after compaction a running and a new daemon serve every record, tombstone and old change token")
    func compactedLogServesTheSameStore() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let url = cluster.url(schema: schema)
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        let first = try await serve(url, users, token)
        let a = client(first, token)
        _ = try await a.modifyZones(save: [zone], delete: [], scope: .private)
        for i in 0..<10 { try await a.save([note("early-\(i)")]) }
        let before = try await a.fetchAllZoneChanges(zone, since: nil, scope: .private).syncToken
        _ = try await a.modifyRecords(ModifyRecordsRequest(deletes: [note("early-0").id]), scope: .private)
        for i in 0..<10 { try await a.save([note("late-\(i)")]) }
        let entries = try cluster.sql("SELECT count(*) FROM \(schema).zonertc_log")
        #expect(entries == "22")

        let store = try #require(first.store as? PostgresStore)
        let deleted = try await store.compact(olderThan: .zero)
        #expect(deleted == 22)
        #expect(try cluster.sql("SELECT count(*) FROM \(schema).zonertc_log") == "0")
        #expect(try cluster.sql("SELECT seq FROM \(schema).zonertc_snapshot") == "22")

        // A daemon started now has only the snapshot to go by.
        let second = try await serve(url, users, token)
        let b = client(second, token)
        for (name, c) in [("running", a), ("started after", b)] {
            let all = try await c.fetchAllZoneChanges(zone, since: nil, scope: .private)
            #expect(Set(all.changed.map(\.id.recordName)).count == 19, "\(name)")
            #expect(!all.changed.contains { $0.id.recordName == "early-0" }, "\(name)")
            let since = try await c.fetchAllZoneChanges(zone, since: before, scope: .private)
            #expect(since.changed.map(\.id.recordName).sorted() == (0..<10).map { "late-\($0)" }.sorted(), "\(name)")
            #expect(since.deleted.map(\.id.recordName) == ["early-0"], "\(name)")
        }
        // Both keep writing on top of the snapshot, each seeing the other's writes.
        try await b.save([note("after-b")])
        try await a.save([note("after-a")])
        // The same record with a stale change tag: the database orders it after the snapshot's state.
        let stale = try await b.fetchAllZoneChanges(zone, since: nil, scope: .private).changed
            .first { $0.id.recordName == "late-3" }
        var edited = try #require(stale)
        edited.fields["v"] = .int64(1)
        try await a.save([edited])
        await #expect(throws: StoreError.self) { try await b.save([edited]) }
        for c in [a, b] {
            let names = Set(try await c.fetchAllZoneChanges(zone, since: nil, scope: .private).changed
                .map(\.id.recordName))
            #expect(names.isSuperset(of: ["after-a", "after-b"]) && names.count == 21)
        }
        #expect((second.store as? PostgresStore)?.counters.rebuilds == 0)
    }
}
#endif
