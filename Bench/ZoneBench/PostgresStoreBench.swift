#if PostgreSQL
import Foundation
import PostgresStore
import RecordStore
import StoreServer
import ZoneCore

/// Daemons on one PostgreSQL database (`--postgres URL`): durable saves/s from 16 connections
/// spread over 1, 2 and 4 daemons, and push latency (`lan`) from a write through one daemon to the
/// event on a stream of another. Each daemon is a `StoreDaemon` with its own `PostgresStore` (its
/// own connections and replica of the log), as `zonertc store serve --postgres` runs it; each
/// daemon count gets a schema of its own in the database.
enum PostgresStoreBench {
    static func run(url: String?, daemonCounts: [Int] = [1, 2, 4], groupCommit: GroupCommit = GroupCommit(),
                    json: Bool) async {
        guard let url else {
            print("postgres bench: give --postgres URL (see Bench/postgres.sh, which makes a throwaway cluster)")
            return
        }
        if !json {
            print("postgres: group commit " + (groupCommit.delay == .zero ? "off"
                  : "\(Int(groupCommit.delay / .microseconds(1))) µs, up to \(groupCommit.size) writes"))
        }
        do {
            for count in daemonCounts {
                let schema = "bench_\(count)_\(getpid())"
                let served = try await daemons(count, url: try await PostgresStore.schemaURL(url, schema: schema),
                                               groupCommit: groupCommit)
                defer { for (d, s) in served { d.stop(); s.close() } }
                let token = try await PostgresUserDirectory(store: served[0].1).register("bench")
                func client(_ i: Int, _ device: String) -> RemoteStoreClient {
                    var c = RemoteStoreClient.Configuration(endpoint: served[i % count].0.endpoint, token: token)
                    c.retry = .none
                    return RemoteStoreClient(configuration: c, userRecordName: "bench", deviceID: device)
                }
                let zone = ZoneID(zoneName: "room_pg")
                _ = try await client(0, "setup").modifyZones(save: [zone], delete: [], scope: .private)
                let before = served.map { $0.1.counters }
                let walBefore = try await served[0].1.walFlushes()
                try await saves(daemons: count, client: client, zone: zone, json: json)
                let walSyncs = try await served[0].1.walFlushes() - walBefore
                let batches = zip(served, before).map { $0.0.1.counters.batches - $0.1.batches }.reduce(0, +)
                let writes = zip(served, before).map { $0.0.1.counters.writes - $0.1.writes }.reduce(0, +)
                let flushes = zip(served, before).map { $0.0.1.counters.flushes - $0.1.flushes }.reduce(0, +)
                if !json {
                    let perBatch = String(format: "%.1f", Double(writes) / Double(max(batches, 1)))
                    let perFlush = String(format: "%.1f", Double(writes) / Double(max(flushes, 1)))
                    let perSync = String(format: "%.1f", Double(writes) / Double(max(walSyncs, 1)))
                    print("  \(batches) transactions, \(perBatch) writes per transaction; "
                          + "\(flushes) synchronous commits of the durable mark, \(perFlush) writes each; "
                          + "\(walSyncs) WAL flushes (pg_stat_wal.wal_sync), \(perSync) writes each")
                    print("  " + profile(zip(served, before).map { ($0.0.1.counters, $0.1) }))
                }
                if count == 2 { try await pushLatency(client: client, zone: zone, json: json) }
            }
        } catch {
            print("postgres bench failed: \(error)")
        }
    }

    /// Where the batches' time went over the run, per batch (ms), summed over the daemons; and how
    /// many writes a mark other than their daemon's own flush answered.
    static func profile(_ runs: [(after: PostgresStore.Counters, before: PostgresStore.Counters)]) -> String {
        var batches = 0, flushes = 0, shared = 0, writes = 0, caught = 0, refused = 0
        var lock: UInt64 = 0, catchUp: UInt64 = 0, execute: UInt64 = 0, append: UInt64 = 0
        var queue: UInt64 = 0, flush: UInt64 = 0, gather: UInt64 = 0, held = 0, gathered = 0
        for (a, b) in runs {
            gather += a.timings.gatherNanos - b.timings.gatherNanos
            held += a.timings.batchesHeldOpen - b.timings.batchesHeldOpen
            gathered += a.timings.writesGathered - b.timings.writesGathered
            batches += a.batches - b.batches
            flushes += a.flushes - b.flushes
            writes += a.writes - b.writes
            shared += a.sharedAcknowledgements - b.sharedAcknowledgements
            refused += a.notifyFailures - b.notifyFailures
            caught += a.timings.entriesCaughtUp - b.timings.entriesCaughtUp
            lock += a.timings.lockNanos - b.timings.lockNanos
            catchUp += a.timings.catchUpNanos - b.timings.catchUpNanos
            execute += a.timings.executeNanos - b.timings.executeNanos
            append += a.timings.appendNanos - b.timings.appendNanos
            queue += a.timings.flushQueueNanos - b.timings.flushQueueNanos
            flush += a.timings.flushNanos - b.timings.flushNanos
        }
        func ms(_ n: UInt64, _ per: Int) -> String { String(format: "%.3f", Double(n) / 1e6 / Double(max(per, 1))) }
        return "group commit: \(held) of \(batches) batches held open \(ms(gather, held)) ms each, "
            + "\(gathered) writes joined them; "
            + "per batch (ms): lock+read \(ms(lock, batches)), catch-up \(ms(catchUp, batches)) "
            + "(\(String(format: "%.2f", Double(caught) / Double(max(batches, 1)))) entries), "
            + "execute \(ms(execute, batches)), insert+commit \(ms(append, batches)), "
            + "wait for flusher \(ms(queue, batches)); per flush: \(ms(flush, flushes)) ms; "
            + "\(shared) of \(writes) writes answered under another mark; "
            + "\(refused) durable marks' NOTIFY refused"
    }

    static func daemons(_ count: Int, url: String,
                        groupCommit: GroupCommit = GroupCommit()) async throws -> [(StoreDaemon, PostgresStore)] {
        var out: [(StoreDaemon, PostgresStore)] = []
        for _ in 0..<count {
            var options = PostgresStore.Options(url: url)
            options.groupCommit = groupCommit
            options.pushProfile = .lan
            let store = try await PostgresStore.open(options: options)
            let daemon = try StoreDaemon(api: StoreAPI(store: store, users: PostgresUserDirectory(store: store),
                                                       allowRegister: false),
                                         options: .init(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            out.append((daemon, store))
        }
        return out
    }

    static func saves(daemons: Int, client: (Int, String) -> RemoteStoreClient, zone: ZoneID,
                      json: Bool) async throws {
        let connections = 16
        let clients = (0..<connections).map { client($0, "w\($0)") }
        let cpuBefore = ProcessCPU.read()
        let (merged, elapsed) = await ConcurrentLoad.run(workers: connections, seconds: 5) { w, i in
            let r = Record(recordType: "SignalIceChunk", id: RecordID(recordName: "IC_\(w)_\(i)", zoneID: zone),
                           fields: ["candidate": .string("candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host"),
                                    "seq": .int64(Int64(i))])
            _ = try await clients[w].save([r])
        }
        let rate = Double(merged.count) / elapsed
        let cpu = ProcessCPU.read().perOperation(since: cpuBefore, operations: Int(clamping: merged.count))
        let s = merged.summary
        if json {
            print(#"{"bench":"postgres-saves","daemons":\#(daemons),"connections":\#(connections),"#
                  + #""savesPerSecond":\#(Int(rate)),"p50Ms":\#(s.p50Ms),"p99Ms":\#(s.p99Ms),"#
                  + #""cpuMicrosPerSave":{"daemonsAndClients":\#(Int(cpu.selfMicros)),"postgres":\#(Int(cpu.serverMicros))}}"#)
        } else {
            print("postgres saves  \(daemons) daemon(s), \(connections) connections: \(Int(rate)) saves/s  "
                  + "latency p50 \(String(format: "%.3f", s.p50Ms)) ms  p99 \(String(format: "%.3f", s.p99Ms)) ms")
            print("  CPU per save: \(Int(cpu.selfMicros)) µs in the daemons and clients (this process), "
                  + "\(Int(cpu.serverMicros)) µs in PostgreSQL")
        }
    }

    /// Writes through daemon 0, the stream on daemon 1: acknowledged → event.
    static func pushLatency(client: (Int, String) -> RemoteStoreClient, zone: ZoneID, json: Bool) async throws {
        let writer = client(0, "writer")
        let listener = client(1, "listener")
        _ = try await writer.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)],
                                                 delete: [], scope: .private)
        let stream = try await listener.notifications()
        var iterator = stream.makeAsyncIterator()
        var h = LatencyHistogram()
        for i in 0..<BenchRun.count(500) {
            _ = try await writer.save([Record(recordType: "SignalEnvelope",
                                              id: RecordID(recordName: "SE_\(i)", zoneID: zone))])
            let acked = Stopwatch()
            guard await iterator.next() != nil else { print("push stream ended"); return }
            h.record(acked.elapsed)
        }
        let s = h.summary
        if json {
            print(#"{"bench":"postgres-push-latency","profile":"lan","daemons":2,"count":\#(s.count),"#
                  + #""p50Ms":\#(s.p50Ms),"p99Ms":\#(s.p99Ms),"maxMs":\#(s.maxMs)}"#)
        } else {
            print("postgres push latency profile=lan, ack on daemon A → event on daemon B, \(s.count) writes: "
                  + "p50 \(String(format: "%.3f", s.p50Ms)) ms  p99 \(String(format: "%.3f", s.p99Ms)) ms  "
                  + "max \(String(format: "%.3f", s.maxMs)) ms")
        }
    }
}
#endif
