#if PostgreSQL
import PostgresStore
import RecordStore
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// A daemon started on a database whose schema an older build made migrates it and serves what
/// the older schema holds.
@Suite("PostgreSQL: migrating an older schema", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresMigrationTests {
    @Test("a daemon started on schema version 3 (no write batch functions) migrates it, then reads and writes")
    func startsOnVersionThree() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let url = cluster.url(schema: schema)
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        let zone = ZoneID(zoneName: "room_migrate")
        func note(_ name: String) -> Record { Record(recordType: "Note", id: RecordID(recordName: name, zoneID: zone)) }
        func serve() async throws -> (StoreDaemon, PostgresStore, RemoteStoreClient) {
            let store = try await PostgresStore.open(options: PostgresStore.Options(url: url))
            let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false),
                                         options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            var config = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: token)
            config.retry = .none
            return (daemon, store, RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: "d"))
        }

        let (oldDaemon, oldStore, old) = try await serve()
        _ = try await old.modifyZones(save: [zone], delete: [], scope: .private)
        try await old.save([note("before")])
        let written = try await old.fetchAllZoneChanges(zone, since: nil, scope: .private).changed
        oldDaemon.stop()
        oldStore.close()
        // What version 3 was: the same tables, without migration 4's functions.
        _ = try cluster.sql("""
            DROP FUNCTION \(schema).zonertc_lock_head(bigint, bigint);
            DROP FUNCTION \(schema).zonertc_append(bigint, bytea, text);
            DELETE FROM \(schema).zonertc_migrations WHERE version >= 4;
            """)
        #expect(try cluster.sql("SELECT max(version) FROM \(schema).zonertc_migrations") == "3")

        let (daemon, store, client) = try await serve()
        defer { daemon.stop(); store.close() }
        #expect(try cluster.sql("SELECT max(version) FROM \(schema).zonertc_migrations") == "13")
        let read = try await client.fetchAllZoneChanges(zone, since: nil, scope: .private).changed
        #expect(read.map(\.id.recordName) == ["before"])
        var edited = try #require(written.first)
        edited.fields["v"] = .int64(1)
        try await client.save([edited])
        // The old change tag is stale now: the migrated store still decides the conflict.
        await #expect(throws: StoreError.self) { try await client.save([edited]) }
        try await client.save([note("after")])
        let names = try await client.fetchAllZoneChanges(zone, since: nil, scope: .private).changed.map(\.id.recordName)
        #expect(Set(names) == ["before", "after"])
        #expect(try cluster.sql("SELECT count(*) FROM \(schema).zonertc_log") == "4")
    }
}
#endif
