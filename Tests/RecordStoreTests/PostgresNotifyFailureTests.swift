#if PostgreSQL
import Foundation
import PostgresStore
import RecordStore
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// A durable mark that committed is durable even when the NOTIFY that tells the other daemons
/// (`dN`, in a transaction of its own after it) fails: its writes are answered as saved, and the
/// other daemons learn the mark from the log.
///
/// The refusal is the database's own: the daemons' `search_path` puts their schema before
/// `pg_catalog`, where a function of the same signature shadows `pg_notify` and raises
/// program_limit_exceeded (the SQLSTATE of "too many notifications in the NOTIFY queue") for a
/// `dN` payload only, passing the batches' `N` through. No hook in the store; filling the real
/// queue (8 GB by default) is out of reach for a test.
@Suite("PostgreSQL: a durable mark whose NOTIFY fails still answers its writes", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresNotifyFailureTests {
    @Test("the dN NOTIFY refused: the save is answered, counted, and reads back through both daemons")
    func savedDespiteTheNotify() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        try cluster.sql("""
            CREATE FUNCTION \(schema).pg_notify(channel text, payload text) RETURNS void
            LANGUAGE plpgsql AS $fn$
            BEGIN
                IF left(payload, 1) = 'd' THEN
                    RAISE EXCEPTION 'too many notifications in the NOTIFY queue (test)'
                        USING ERRCODE = 'program_limit_exceeded';
                END IF;
                PERFORM pg_catalog.pg_notify(channel, payload);
            END
            $fn$
            """)
        let url = cluster.url(schema: "\(schema)%2Cpg_catalog")
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        var served: [(daemon: StoreDaemon, store: PostgresStore)] = []
        defer { for (d, s) in served { d.stop(); s.close() } }
        var clients: [RemoteStoreClient] = []
        for _ in 0..<2 {
            var options = PostgresStore.Options(url: url)
            // One flusher session: the later flushes show the refused one left it usable.
            options.flushers = 1
            let store = try await PostgresStore.open(options: options)
            let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false),
                                         options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            served.append((daemon, store))
            var config = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: token)
            config.retry = .none
            clients.append(RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: "d"))
        }
        let (a, b) = (clients[0], clients[1])
        let store = served[0].store
        // The shadow is what the daemons' sessions call.
        #expect(try cluster.sql("SELECT count(*) FROM pg_proc WHERE proname = 'pg_notify'") == "2")

        let zone = ZoneID(zoneName: "room_notify_refused")
        _ = try await a.modifyZones(save: [zone], delete: [], scope: .private)
        #expect(store.counters.notifyFailures == 1)
        let id = RecordID(recordName: "saved", zoneID: zone)
        let saved = try await a.save([Record(recordType: "Note", id: id, fields: ["n": .int64(1)])])
        #expect(saved.map(\.id.recordName) == ["saved"])
        #expect(store.counters.notifyFailures == 2, "one refused NOTIFY per flush")
        #expect(store.counters.failures == 0, "the flush was taken for a failure")
        #expect(store.counters.flushes == 2)
        let covered = "SELECT (SELECT max(seq) FROM \(schema).zonertc_durable) >= "
            + "(SELECT seq FROM \(schema).zonertc_head)"
        #expect(try cluster.sql(covered) == "t", "an answered write's entry is not under the durable mark")

        // Read back through this daemon and through the other, which heard no dN.
        for client in [a, b] {
            let found = try await client.lookupRecords([id], scope: .private)
            #expect(found.first?.record?.fields["n"] == .int64(1))
        }
        // The flusher's session is usable: the next flush commits (and is refused its NOTIFY) too.
        let second = RecordID(recordName: "after", zoneID: zone)
        _ = try await a.save([Record(recordType: "Note", id: second)])
        #expect(store.counters.notifyFailures == 3)
        #expect(try await b.lookupRecords([second], scope: .private).first?.record != nil)
    }
}
#endif
