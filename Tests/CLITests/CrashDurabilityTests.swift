import Foundation
import RecordStore
import StoreServer
import Synchronization
import Testing
import ZoneCore

/// docs/STORE.md "Durability": SIGKILL the daemon under load; every acknowledged write survives.
@Suite("Store daemon durability under a real crash")
struct CrashDurabilityTests {
    let room = ZoneID(zoneName: "room_crash")

    static func payload(_ name: String) -> FieldValue { .string(String(repeating: name + ";", count: 20)) }

    @Test("SIGKILL mid-load: acknowledged writes are there, nothing is half there, old tokens work",
          arguments: ["batch", "always"])
    func sigkillMidLoad(_ fsync: String) async throws {
        let dir = NSTemporaryDirectory() + "zonertc-crash-\(UUID().uuidString)"
        var daemon = try DaemonProcess(arguments: ["--data", dir, "--fsync", fsync])
        let token = try await RemoteStoreClient.register(userName: "alice", at: daemon.endpoint)
        func client(_ endpoint: Endpoint, _ device: String) -> RemoteStoreClient {
            var config = RemoteStoreClient.Configuration(endpoint: endpoint, token: token)
            config.retry = .none
            config.requestTimeout = .seconds(5)
            return RemoteStoreClient(configuration: config, userRecordName: "alice", deviceID: device)
        }
        let setup = client(daemon.endpoint, "setup")
        _ = try await setup.modifyZones(save: [room], delete: [], scope: .private)
        try await setup.save([Record(recordType: "Note", id: RecordID(recordName: "before", zoneID: room))])
        let oldToken = try await setup.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken

        final class Progress: Sendable {
            let acked = Mutex<[String]>([])
            let killed = Atomic<Bool>(false)
        }
        let progress = Progress()
        let victim = daemon
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                let c = client(daemon.endpoint, "w\(w)")
                group.addTask { [room] in
                    for i in 0..<10_000 {
                        let name = "w\(w)-\(i)"
                        let record = Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room),
                                            fields: ["payload": CrashDurabilityTests.payload(name), "i": .int64(Int64(i))])
                        do { _ = try await c.save([record]) } catch { return }
                        let count = progress.acked.withLock { $0.append(name); return $0.count }
                        if count >= 300, !progress.killed.exchange(true, ordering: .sequentiallyConsistent) {
                            victim.kill(SIGKILL)
                        }
                    }
                }
            }
        }
        let acknowledged = Set(progress.acked.withLock { $0 })
        #expect(acknowledged.count >= 300)

        daemon = try DaemonProcess(arguments: ["--data", dir, "--fsync", fsync])
        let after = client(daemon.endpoint, "after")
        let all = try await after.fetchAllZoneChanges(room, since: nil, scope: .private)
        var present = Set<String>()
        for record in all.changed {
            present.insert(record.id.recordName)
            if record.id.recordName != "before" {
                #expect(record["payload"] == CrashDurabilityTests.payload(record.id.recordName), "record \(record.id.recordName) is damaged")
            }
        }
        #expect(acknowledged.isSubset(of: present), "lost: \(acknowledged.subtracting(present).sorted().prefix(5))")
        #expect(present.contains("before"))
        // The token from before the crash still works and brings every write since.
        let since = try await after.fetchAllZoneChanges(room, since: oldToken, scope: .private)
        #expect(Set(since.changed.map(\.id.recordName)) == present.subtracting(["before"]))
        daemon.kill(SIGTERM)
        try? FileManager.default.removeItem(atPath: dir)
    }
}
