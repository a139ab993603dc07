import Foundation
import RecordStore
import StoreServer
import Testing
import ZoneCore

/// Issue 13, item 3, as an operator meets it: a damaged journal stops `store serve` with the
/// offset; `store repair` salvages; `store serve` then serves every intact entry.
@Suite("zonertc store repair")
struct StoreRepairProcessTests {
    @Test("damaged journal: serve exits 1 naming the offset; repair; serve serves the intact entries")
    func refuseRepairServe() async throws {
        let dir = NSTemporaryDirectory() + "zonertc-repair-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let room = ZoneID(zoneName: "room_r")
        var options = EmbeddedStore.Options(directory: dir)
        options.automaticPush = false
        let store = try EmbeddedStore(options: options)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        for i in 0..<40 {
            try await alice.save([Record(recordType: "Note", id: RecordID(recordName: "n\(i)", zoneID: room),
                                         fields: ["i": .int64(Int64(i))])])
        }
        store.close()
        let path = "\(dir)/journal-0.log"
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Find entry 21 (record n20) and flip one bit of its payload.
        var offset = 16
        for _ in 0..<21 {
            let length = original[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            offset += 8 + length
        }
        var damaged = original
        damaged[offset + 10] ^= 0x20
        try Data(damaged).write(to: URL(fileURLWithPath: path))

        let refused = try ZonertcProcess.run(["store", "serve", "--listen", "127.0.0.1:0", "--data", dir])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("damaged at offset \(offset)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("store repair"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == damaged)

        let repair = try ZonertcProcess.run(["store", "repair", "--data", dir])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("kept 40 intact entries"), "\(repair.stdout)")
        #expect(repair.stdout.contains("dropped damaged at offset \(offset)"), "\(repair.stdout)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".damaged-") }
        #expect(copies.count == 1)

        let added = try ZonertcProcess.run(["store", "user", "add", "alice", "--data", dir])
        let token = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let daemon = try DaemonProcess(arguments: ["--data", dir])
        let client = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                       userRecordName: "alice", deviceID: "d")
        let all = try await client.fetchAllZoneChanges(room, since: nil, scope: .private)
        let expected = Set((0..<40).filter { $0 != 20 }.map { "n\($0)" })
        #expect(Set(all.changed.map(\.id.recordName)) == expected)
        daemon.kill(SIGTERM)
        #expect(daemon.process.terminationStatus == 0)
    }
}
