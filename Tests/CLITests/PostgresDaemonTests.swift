#if PostgreSQL
import Foundation
import RecordStore
import StoreServer
import TestSupport
import Testing
import ZoneCore

/// `zonertc store serve --postgres` as processes: several daemons on one database of a throwaway
/// cluster, and what happens when one of them, the database or a LISTEN connection goes away.
@Suite("zonertc store serve --postgres", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresDaemonTests {
    let room = ZoneID(zoneName: "room_a")

    /// `count` daemons on a new database of `cluster`, and a token for `user` made by `store user add`.
    func daemons(_ count: Int, on cluster: PostgresCluster, user: String = "alice",
                 extra: [String] = []) throws -> (url: String, daemons: [DaemonProcess], token: String) {
        let url = cluster.url(database: try cluster.freshDatabase())
        let daemons = try (0..<count).map { _ in try DaemonProcess(arguments: ["--postgres", url] + extra) }
        let added = try ZonertcProcess.run(["store", "user", "add", user, "--postgres", url])
        #expect(added.status == 0, "\(added.stderr)")
        return (url, daemons, added.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func client(_ daemon: DaemonProcess, _ token: String, user: String = "alice", device: String = "d",
                retry: Bool = false) -> RemoteStoreClient {
        var config = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: token)
        if !retry { config.retry = .none }
        config.requestTimeout = .seconds(20)
        return RemoteStoreClient(configuration: config, userRecordName: user, deviceID: device)
    }

    @Test("--data and --postgres exclude each other; a name is taken once; inspect reads the database")
    func usage() async throws {
        let both = try ZonertcProcess.run(["store", "serve", "--data", "/tmp/x", "--postgres", "postgresql:///x"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("exclude each other"))
        let cluster = try PostgresCluster.shared()
        // Inspect migrates nothing: a database no daemon has set up gets a clear refusal, not SQL.
        let empty = try ZonertcProcess.run(["store", "inspect", "--postgres",
                                            cluster.url(database: try cluster.freshDatabase())])
        #expect(empty.status == 1 && empty.stderr.contains("has no ZoneRTC schema")
                && empty.stderr.contains("zonertc store serve --postgres URL"), "\(empty.stderr)")
        let (url, ds, token) = try daemons(1, on: cluster)
        let again = try ZonertcProcess.run(["store", "user", "add", "alice", "--postgres", url])
        #expect(again.status != 0 && !again.stdout.contains(token), "a token is never handed out twice")
        let alice = Self.client(ds[0], token)
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await alice.save([record("r1")])
        // A token from this daemon still works on a daemon started afterwards (a restart).
        let token1 = try await alice.fetchAllZoneChanges(room, since: nil, scope: .private).syncToken
        ds[0].kill(SIGTERM)
        let restarted = try DaemonProcess(arguments: ["--postgres", url])
        let again1 = try await Self.client(restarted, token).fetchZoneChanges(room, since: token1, resultsLimit: nil,
                                                                              scope: .private)
        #expect(again1.changed.isEmpty && again1.deleted.isEmpty)
        let inspected = try ZonertcProcess.run(["store", "inspect", "--postgres", url, "--json"])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.stdout.contains("room_a") && inspected.stdout.contains("alice"))
    }

    @Test("two daemons save the same record with the same old change tag at once: exactly one wins, every time")
    func conflictAcrossDaemons() async throws {
        let cluster = try PostgresCluster.shared()
        let (_, ds, token) = try daemons(2, on: cluster)
        let a = Self.client(ds[0], token, device: "a"), b = Self.client(ds[1], token, device: "b")
        _ = try await a.modifyZones(save: [room], delete: [], scope: .private)
        for round in 0..<25 {
            let saved = try await a.save([record("contested-\(round)", ["v": .int64(0)])])[0]
            var fromA = saved, fromB = saved
            fromA.fields["v"] = .int64(1)
            fromB.fields["v"] = .int64(2)
            async let ra = a.modifyRecords(ModifyRecordsRequest(saves: [fromA]), scope: .private)
            async let rb = b.modifyRecords(ModifyRecordsRequest(saves: [fromB]), scope: .private)
            let results = try await [ra, rb]
            let wins = results.filter { $0.failures.isEmpty }.count
            let conflicts = results.filter { $0.failures.first?.1.code == .serverRecordChanged }.count
            #expect(wins == 1 && conflicts == 1, "round \(round): \(wins) wins, \(conflicts) conflicts")
            // Both daemons now agree on the winner.
            let seenA = try await a.lookupRecords([saved.id], scope: .private)
            let seenB = try await b.lookupRecords([saved.id], scope: .private)
            #expect(seenA.first?.record?.recordChangeTag == seenB.first?.record?.recordChangeTag)
        }
    }

    @Test("a push stream on one daemon hears of a write made through the other")
    func pushAcrossDaemons() async throws {
        let cluster = try PostgresCluster.shared()
        let (_, ds, token) = try daemons(2, on: cluster)
        let writer = Self.client(ds[0], token, device: "writer")
        let listener = Self.client(ds[1], token, device: "listener")
        _ = try await writer.modifyZones(save: [room], delete: [], scope: .private)
        _ = try await writer.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)],
                                                 delete: [], scope: .private)
        let stream = try await listener.notifications()
        var it = stream.makeAsyncIterator()
        // Tokens are the database's: one from the writer's daemon works on the listener's.
        var since = try await writer.fetchAllZoneChanges(room, since: nil, scope: .private).syncToken
        for i in 0..<5 {
            try await writer.save([record("n\(i)")])
            let note = try #require(await it.next())
            #expect(note.subscriptionID == "db")
            let changes = try await listener.fetchZoneChanges(room, since: since, resultsLimit: nil, scope: .private)
            #expect(changes.changed.map(\.id.recordName) == ["n\(i)"])
            since = changes.syncToken
        }
    }

    @Test("SIGKILL one of two daemons under 16 writers: no acknowledged write is lost; the other keeps serving")
    func killOneDaemon() async throws {
        let cluster = try PostgresCluster.shared()
        let (_, ds, token) = try daemons(2, on: cluster)
        let setup = Self.client(ds[1], token)
        _ = try await setup.modifyZones(save: [room], delete: [], scope: .private)
        let acknowledged = Ledger<String>()
        let killed = Ledger<Bool>()
        let victim = ds[0]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<16 {
                group.addTask {
                    var target = w % 2 == 0 ? 0 : 1
                    for i in 0..<40 {
                        let name = "w\(w)-\(i)"
                        while true {
                            let c = Self.client(ds[target], token, device: "w\(w)")
                            do {
                                try await c.save([record(name)])
                                if acknowledged.append(name) == 150 {
                                    killed.append(true)
                                    victim.kill(SIGKILL)
                                }
                                break
                            } catch let e as StoreError where e.code == .serverRecordChanged {
                                // An earlier attempt did commit before its daemon died: it is there.
                                acknowledged.append(name)
                                break
                            } catch {
                                // The killed daemon: the client moves to the other one.
                                #expect(target == 0, "the surviving daemon failed: \(error)")
                                target = 1
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(killed.items == [true])
        let names = acknowledged.items
        #expect(names.count == 640)
        let all = try await Self.client(ds[1], token).fetchAllZoneChanges(room, since: nil, scope: .private)
        let stored = Set(all.changed.map(\.id.recordName))
        let lost = names.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "lost \(lost.count): \(lost.prefix(5))")
    }

    @Test("PostgreSQL restarts under load: TRY_AGAIN_LATER + retryAfter, nothing acknowledged lost, daemons reconnect")
    func databaseRestart() async throws {
        let cluster = try PostgresCluster.makePrivate()
        defer { cluster.destroy() }
        let (_, ds, token) = try daemons(2, on: cluster)
        let setup = Self.client(ds[0], token)
        _ = try await setup.modifyZones(save: [room], delete: [], scope: .private)
        let acknowledged = Ledger<String>()
        let refusals = Ledger<StoreError>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                group.addTask {
                    let c = Self.client(ds[w % 2], token, device: "w\(w)")
                    for i in 0..<30 {
                        let name = "w\(w)-\(i)"
                        while true {
                            do {
                                try await c.save([record(name)])
                                if acknowledged.append(name) == 60 {
                                    // Fast shutdown ends every session; the other writers meet the gap.
                                    try await offPool { cluster.stop(); try cluster.start() }
                                }
                                break
                            } catch let e as StoreError where e.code == .serverRecordChanged {
                                // An attempt whose answer was lost did commit: it is there.
                                acknowledged.append(name)
                                break
                            } catch let e as StoreError where e.code == .serviceUnavailable {
                                refusals.append(e)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let errors = refusals.items
        #expect(!errors.isEmpty, "no request met the stopped database")
        #expect(errors.allSatisfy { $0.retryAfter != nil })
        let names = acknowledged.items
        #expect(names.count == 240)
        for d in ds {
            let all = try await Self.client(d, token).fetchAllZoneChanges(room, since: nil, scope: .private)
            let stored = Set(all.changed.map(\.id.recordName))
            #expect(names.allSatisfy { stored.contains($0) }, "a daemon is missing acknowledged writes")
        }
    }

    @Test("PostgreSQL crashes (immediate stop) under 16 writers: every acknowledged write survives, daemons agree")
    func databaseCrash() async throws {
        let cluster = try PostgresCluster.makePrivate()
        defer { cluster.destroy() }
        let (_, ds, token) = try daemons(2, on: cluster)
        _ = try await Self.client(ds[0], token).modifyZones(save: [room], delete: [], scope: .private)
        let acknowledged = Ledger<String>()
        let refusals = Ledger<StoreError>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<16 {
                group.addTask {
                    let c = Self.client(ds[w % 2], token, device: "w\(w)")
                    for i in 0..<25 {
                        let name = "w\(w)-\(i)"
                        while true {
                            do {
                                try await c.save([record(name)])
                                if acknowledged.append(name) == 100 {
                                    // No checkpoint, no flush: batches committed but not yet durable are lost.
                                    try await offPool { cluster.crash(); try cluster.start() }
                                }
                                break
                            } catch let e as StoreError where e.code == .serverRecordChanged {
                                // A conflict is answered only once what it saw is durable: the record is there.
                                acknowledged.append(name)
                                break
                            } catch let e as StoreError where e.code == .serviceUnavailable {
                                refusals.append(e)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(!refusals.items.isEmpty, "no request met the crashed database")
        let names = acknowledged.items
        #expect(names.count == 400)
        var seen: [Set<String>] = []
        for d in ds {
            let all = try await Self.client(d, token).fetchAllZoneChanges(room, since: nil, scope: .private)
            let stored = Set(all.changed.map(\.id.recordName))
            #expect(names.allSatisfy { stored.contains($0) }, "a daemon is missing acknowledged writes")
            seen.append(stored)
        }
        // Replicas that held entries the crash took were rebuilt: both serve what the database holds.
        #expect(seen[0] == seen[1])
    }

    @Test("a LISTEN connection ended by pg_terminate_backend is re-established; pushes keep coming")
    func listenConnectionDropped() async throws {
        let cluster = try PostgresCluster.shared()
        let (url, ds, token) = try daemons(2, on: cluster)
        let writer = Self.client(ds[0], token, device: "writer")
        let listener = Self.client(ds[1], token, device: "listener")
        _ = try await writer.modifyZones(save: [room], delete: [], scope: .private)
        _ = try await writer.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)],
                                                 delete: [], scope: .private)
        let stream = try await listener.notifications()
        var it = stream.makeAsyncIterator()
        let database = String(url.split(separator: "?")[0].split(separator: "/").last ?? "")
        let listening = """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = '\(database)' AND application_name = 'zonertc-listen'
            """
        for round in 0..<3 {
            // Both daemons' listeners are back (each query is a round trip to the server: no sleeping).
            var back = false
            for _ in 0..<500 where !back { back = try cluster.sql(listening) == "2" }
            #expect(back, "round \(round): the LISTEN connections did not come back")
            let ended = try cluster.sql("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = '\(database)' AND application_name = 'zonertc-listen'
                """)
            #expect(ended == "2", "round \(round): ended \(ended) LISTEN connections")
            try await writer.save([record("after-drop-\(round)")])
            let note = try #require(await it.next())
            #expect(note.subscriptionID == "db")
        }
    }
}

private func record(_ name: String, _ fields: RecordFields = [:]) -> Record {
    Record(recordType: "Note", id: RecordID(recordName: name, zoneID: ZoneID(zoneName: "room_a")), fields: fields)
}
#endif
