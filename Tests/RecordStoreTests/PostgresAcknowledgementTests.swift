#if PostgreSQL
import Foundation
import Glibc
import PostgresStore
import RecordStore
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// The PostgreSQL backend's acknowledgement rule: a batch commits without waiting for the WAL
/// flush, and its writes are answered only once a synchronous commit of the durable mark
/// (`zonertc_durable`) covers it.
@Suite("PostgreSQL: a write is answered once durable", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresAcknowledgementTests {
    @Test("with the durable mark locked, a committed write waits unanswered; released, it is answered and covered")
    func answeredAfterTheDurableMark() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let store = try await PostgresStore.open(options: PostgresStore.Options(url: cluster.url(schema: schema)))
        let users = try UserRegistry(directory: nil)
        let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: true),
                                     options: StoreDaemon.Options(listen: try Endpoint(parsing: "127.0.0.1:0")))
        try daemon.start()
        defer { daemon.stop(); store.close() }
        var config = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: try users.add("alice"))
        config.retry = .none
        let client = RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: "d")
        let zone = ZoneID(zoneName: "room_ack")
        _ = try await client.modifyZones(save: [zone], delete: [], scope: .private)
        let covered = "SELECT (SELECT max(seq) FROM \(schema).zonertc_durable) >= "
            + "(SELECT seq FROM \(schema).zonertc_head)"
        #expect(try cluster.sql(covered) == "t", "an answered write's entry is not under the durable mark")

        // Another session holds the durable mark's table: the flusher's synchronous commit waits.
        var pipe: [Int32] = [-1, -1]
        // Close-on-exec, so no child but psql (which gets it as stdin) holds the pipe open.
        #expect(Glibc.pipe(&pipe) == 0)
        for fd in pipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let psql = try spawnWatched(["\(cluster.binaries)/psql", "-X", "-q", "-h", cluster.directory,
                                     "-U", "postgres", "-d", "postgres"], stdin: pipe[0])
        close(pipe[0])
        defer { close(pipe[1]); Glibc.kill(psql.pid, SIGTERM); _ = psql.wait(within: .seconds(10)) }
        func send(_ sql: String) {
            _ = Array((sql + "\n").utf8).withUnsafeBytes { write(pipe[1], $0.baseAddress, $0.count) }
        }
        send("BEGIN; LOCK TABLE \(schema).zonertc_durable IN EXCLUSIVE MODE;")
        let held = """
            SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE c.relname = 'zonertc_durable' AND l.mode = 'ExclusiveLock' AND l.granted
            """
        try #require(try cluster.answers(held, "1"), "the other session did not take the lock")

        let answered = Ledger<String>()
        let save = Task {
            try await client.save([Record(recordType: "Note", id: RecordID(recordName: "waits", zoneID: zone))])
            answered.append("waits")
        }
        // The batch commits (its entry is in the log, visible) while the mark cannot move.
        let entries = "SELECT count(*) FROM \(schema).zonertc_log"
        #expect(try cluster.answers(entries, "2"), "the batch did not commit")
        #expect(try cluster.sql(covered) == "f")
        #expect(answered.items.isEmpty, "a write was answered before its entry was durable")

        send("COMMIT;\n\\q")
        try await save.value
        #expect(answered.items == ["waits"])
        #expect(try cluster.sql(covered) == "t", "an answered write's entry is not under the durable mark")
        #expect(store.counters.flushes >= 2)
    }

    @Test("with one daemon's flush held, its write is answered under the mark another daemon's flush made")
    func answeredUnderAnotherDaemonsMark() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let users = try UserRegistry(directory: nil)
        let token = try users.add("alice")
        var served: [(daemon: StoreDaemon, store: PostgresStore)] = []
        defer { for (d, s) in served { d.stop(); s.close() } }
        var clients: [RemoteStoreClient] = []
        for i in 0..<2 {
            var options = PostgresStore.Options(url: cluster.url(schema: schema))
            // A flushes through one row only, so holding the rows there are holds all its flushes.
            if i == 0 { options.flushers = 1 }
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
        let zone = ZoneID(zoneName: "room_shared_mark")
        // Daemon A's row of the durable mark exists now; B has none yet (it has not written).
        _ = try await a.modifyZones(save: [zone], delete: [], scope: .private)
        #expect(try cluster.sql("SELECT count(*) FROM \(schema).zonertc_durable WHERE seq > 0") == "1")

        // Another session holds every row of the mark there is, A's among them: A's flusher waits,
        // while B's first flush inserts a row of its own and is not held.
        var pipe: [Int32] = [-1, -1]
        #expect(Glibc.pipe(&pipe) == 0)
        for fd in pipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let psql = try spawnWatched(["\(cluster.binaries)/psql", "-X", "-q", "-h", cluster.directory,
                                     "-U", "postgres", "-d", "postgres"], stdin: pipe[0])
        close(pipe[0])
        defer { close(pipe[1]); Glibc.kill(psql.pid, SIGTERM); _ = psql.wait(within: .seconds(10)) }
        func send(_ sql: String) {
            _ = Array((sql + "\n").utf8).withUnsafeBytes { write(pipe[1], $0.baseAddress, $0.count) }
        }
        send("BEGIN; SELECT daemon FROM \(schema).zonertc_durable FOR UPDATE;")
        let held = """
            SELECT count(*) FROM pg_locks
            WHERE relation = '\(schema).zonertc_durable'::regclass AND mode = 'RowShareLock' AND granted
            """
        try #require(try cluster.answers(held, "1"), "the other session did not take the rows")

        let answered = Ledger<String>()
        let throughA = Task {
            try await a.save([Record(recordType: "Note", id: RecordID(recordName: "through-a", zoneID: zone))])
            answered.append("through-a")
        }
        let entries = "SELECT count(*) FROM \(schema).zonertc_log"
        #expect(try cluster.answers(entries, "2"), "A's batch did not commit")
        #expect(answered.items.isEmpty, "A's write was answered before any mark covered it")

        // B's batch comes after A's in the log, so B's flush covers both.
        try await b.save([Record(recordType: "Note", id: RecordID(recordName: "through-b", zoneID: zone))])
        for _ in 0..<500 where answered.items.isEmpty { _ = try cluster.sql("SELECT 1") }
        #expect(answered.items == ["through-a"], "A's write waited for its own flush")
        #expect(served[0].store.counters.sharedAcknowledgements >= 1)
        #expect(try cluster.sql("SELECT count(*) FROM \(schema).zonertc_durable WHERE seq >= 3") == "1",
                "B's row does not cover both entries")

        send("COMMIT;\n\\q")
        try await throughA.value
    }
}

#endif
