import Foundation
import RecordStore
import StoreServer
import ZoneCore

/// The store daemon over HTTP on loopback: durable saves/s from 16 connections (fsync batch),
/// and push latency with the `lan` profile (write acknowledged → event received on another
/// connection).
enum HTTPStoreBench {
    static func run(json: Bool) async {
        let dir = NSTemporaryDirectory() + "zonertc-httpbench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = EmbeddedStore.Options(directory: dir)
        options.fsync = .batch
        options.pushProfile = .lan
        do {
            let store = try EmbeddedStore(options: options)
            let users = try UserRegistry(directory: nil)
            let token = try users.add("bench")
            let daemon = try StoreDaemon(api: StoreAPI(store: store, users: users, allowRegister: false),
                                         options: .init(listen: try Endpoint(parsing: "127.0.0.1:0")))
            try daemon.start()
            defer { daemon.stop(); store.close() }
            func client(_ device: String) -> RemoteStoreClient {
                var c = RemoteStoreClient.Configuration(endpoint: daemon.endpoint, token: token)
                c.retry = .none
                return RemoteStoreClient(configuration: c, userRecordName: "bench", deviceID: device)
            }
            let zone = ZoneID(zoneName: "room_http")
            _ = try await client("setup").modifyZones(save: [zone], delete: [], scope: .private)
            try await saves(client: client, zone: zone, store: store, json: json)
            try await pushLatency(client: client, zone: zone, json: json)
        } catch {
            print("http bench failed: \(error)")
        }
    }

    static func saves(client: (String) -> RemoteStoreClient, zone: ZoneID, store: EmbeddedStore,
                      json: Bool) async throws {
        let connections = 16
        let seconds = 3.0
        let syncsBefore = store.journalStatistics?.syncs ?? 0
        let clients = (0..<connections).map { client("w\($0)") }
        let cpuBefore = ProcessCPU.read()
        let (merged, elapsed) = await ConcurrentLoad.run(workers: connections, seconds: seconds) { w, i in
            let r = Record(recordType: "SignalIceChunk", id: RecordID(recordName: "IC_\(w)_\(i)", zoneID: zone),
                           fields: ["candidate": .string("candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host"),
                                    "seq": .int64(Int64(i))])
            _ = try await clients[w].save([r])
        }
        let syncs = Double((store.journalStatistics?.syncs ?? 0) - syncsBefore)
        let rate = Double(merged.count) / elapsed
        let cpu = ProcessCPU.read().perOperation(since: cpuBefore, operations: Int(clamping: merged.count)).selfMicros
        let s = merged.summary
        if json {
            print(#"{"bench":"http-saves","connections":\#(connections),"savesPerSecond":\#(Int(rate)),"#
                  + #""fsyncsPerSecond":\#(Int(syncs / elapsed)),"p50Ms":\#(s.p50Ms),"p99Ms":\#(s.p99Ms),"#
                  + #""cpuMicrosPerSave":\#(Int(cpu))}"#)
        } else {
            print("http saves   fsync=batch  \(connections) connections: \(Int(rate)) saves/s  \(Int(syncs / elapsed)) fsyncs/s  "
                  + "latency p50 \(String(format: "%.3f", s.p50Ms)) ms  p99 \(String(format: "%.3f", s.p99Ms)) ms  "
                  + "CPU \(Int(cpu)) µs per save (daemon and clients)")
        }
    }

    static func pushLatency(client: (String) -> RemoteStoreClient, zone: ZoneID, json: Bool) async throws {
        let writer = client("writer")
        let listener = client("listener")
        _ = try await writer.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)], delete: [],
                                                 scope: .private)
        let stream = try await listener.notifications()
        var iterator = stream.makeAsyncIterator()
        var h = LatencyHistogram()
        for i in 0..<BenchRun.count(500) {
            _ = try await writer.save([Record(recordType: "SignalEnvelope", id: RecordID(recordName: "SE_\(i)", zoneID: zone))])
            let acked = Stopwatch()
            guard await iterator.next() != nil else { print("push stream ended"); return }
            h.record(acked.elapsed)
        }
        let s = h.summary
        if json {
            print(#"{"bench":"push-latency","profile":"lan","count":\#(s.count),"p50Ms":\#(s.p50Ms),"p99Ms":\#(s.p99Ms),"maxMs":\#(s.maxMs)}"#)
        } else {
            print("push latency profile=lan, ack → event on another connection, \(s.count) writes: "
                  + "p50 \(String(format: "%.3f", s.p50Ms)) ms  p99 \(String(format: "%.3f", s.p99Ms)) ms  max \(String(format: "%.3f", s.maxMs)) ms")
        }
    }
}
