import Foundation
import RecordStore
import Synchronization
import ZoneCore

/// Engine + journal: durable single-record saves from 16 concurrent writers under each fsync
/// policy, and zone-change fetch throughput.
enum StoreBench {
    static let writers = 16
    static let seconds = 3.0

    static func run(json: Bool) async {
        for policy in [FsyncPolicy.batch, .always, .none] {
            await saves(policy: policy, json: json)
        }
        await fetch(records: BenchRun.count(100_000), json: json)
    }

    private static func tempDir() -> String {
        let path = NSTemporaryDirectory() + "zonertc-bench-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// `writers` tasks, each saving one new record per request, for `seconds`.
    static func saves(policy: FsyncPolicy, json: Bool) async {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = EmbeddedStore.Options(directory: dir)
        options.fsync = policy
        options.automaticPush = false
        let store: EmbeddedStore
        do { store = try EmbeddedStore(options: options) } catch {
            print("store bench: \(error)")
            return
        }
        let zone = ZoneID(zoneName: "room_bench")
        _ = try? await store.client(user: "bench").modifyZones(save: [zone], delete: [], scope: .private)
        let syncsBefore = store.journalStatistics?.syncs ?? 0
        let payload = FieldValue.string(String(repeating: "v", count: 200))
        let (histograms, elapsed) = await ConcurrentLoad.run(workers: writers, seconds: seconds) { w, i in
            let client = store.client(user: "bench", deviceID: "w\(w)")
            let r = Record(recordType: "SignalIceChunk", id: RecordID(recordName: "IC_w\(w)_\(i)", zoneID: zone),
                           fields: ["candidate": payload, "seq": .int64(Int64(i))])
            _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [r]), scope: .private)
        }
        let stats = store.journalStatistics
        store.close()
        let saves = Double(histograms.count)
        let syncs = Double((stats?.syncs ?? 0) - syncsBefore)
        let summary = histograms.summary
        if json {
            print(#"{"bench":"store-saves","fsync":"\#(policy.rawValue)","writers":\#(writers),"#
                  + #""savesPerSecond":\#(Int(saves / elapsed)),"fsyncsPerSecond":\#(Int(syncs / elapsed)),"#
                  + #""p50Ms":\#(summary.p50Ms),"p99Ms":\#(summary.p99Ms),"journalBytes":\#(stats?.fileBytes ?? 0)}"#)
        } else {
            let perSync = syncs > 0 ? String(format: "%.1f", saves / syncs) : "-"
            let line = "store saves  fsync=\(policy.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) "
                + "\(writers) writers: \(String(format: "%8.0f", saves / elapsed)) saves/s  "
                + "\(String(format: "%7.0f", syncs / elapsed)) fsyncs/s  (\(perSync) saves per sync)  "
                + "latency p50 \(String(format: "%.3f", summary.p50Ms)) ms  p99 \(String(format: "%.3f", summary.p99Ms)) ms"
            print(line)
        }
    }

    /// A zone of `records` records, fetched whole from a nil token in pages of 400, and then the
    /// delta after 10% of them changed.
    static func fetch(records: Int, json: Bool) async {
        var options = EmbeddedStore.Options.inMemoryForTests
        // Pages (and save batches) of 400, as this bench measured before the Web Services limits
        // (200) became the defaults: its figures stay comparable.
        options.configuration.maxResultsPerPage = 400
        options.configuration.maxItemsPerRequest = 400
        guard let store = try? EmbeddedStore(options: options) else { return }
        let client = store.client(user: "bench")
        let zone = ZoneID(zoneName: "room_fetch")
        _ = try? await client.modifyZones(save: [zone], delete: [], scope: .private)
        var batch: [Record] = []
        for i in 0..<records {
            batch.append(Record(recordType: "SignalIceChunk", id: RecordID(recordName: "IC_\(i)", zoneID: zone),
                                fields: ["candidate": .string("candidate:1 1 udp 2122260223 127.0.0.1 \(40000 + i % 20000) typ host"),
                                         "seq": .int64(Int64(i))]))
            if batch.count == 400 {
                _ = try? await client.modifyRecords(ModifyRecordsRequest(saves: batch), scope: .private)
                batch.removeAll()
            }
        }
        let watch = Stopwatch()
        var fetched = 0
        var token: ChangeToken?
        var pages = 0
        while true {
            guard let page = try? await client.fetchZoneChanges(zone, since: token, resultsLimit: 400, scope: .private) else { break }
            fetched += page.changed.count
            token = page.syncToken
            pages += 1
            if !page.moreComing { break }
        }
        let elapsed = watch.elapsed.seconds
        if json {
            print(#"{"bench":"zone-fetch","records":\#(fetched),"pages":\#(pages),"recordsPerSecond":\#(Int(Double(fetched) / elapsed))}"#)
        } else {
            print(String(format: "zone fetch   %d records in %d pages of ≤400: %.0f records/s (%.1f ms)",
                         fetched, pages, Double(fetched) / elapsed, elapsed * 1000))
        }
        store.close()
    }
}
