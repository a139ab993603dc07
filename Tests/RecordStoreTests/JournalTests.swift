import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// The durable journal: cut at every byte, reopen with tokens, compaction, fsync policies.
@Suite("Journal and recovery")
struct JournalTests {
    let room = ZoneID(zoneName: "room_a")

    private func tempDir() -> String {
        let path = NSTemporaryDirectory() + "zonertc-journal-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func open(_ dir: String, fsync: FsyncPolicy = .batch, clock: ManualClock = ManualClock(),
                      compactAt: Int = 64 << 20) throws -> EmbeddedStore {
        var options = EmbeddedStore.Options(directory: dir)
        options.fsync = fsync
        options.automaticPush = false
        options.compactionThreshold = compactAt
        return try EmbeddedStore(options: options, clock: clock)
    }

    private func names(_ store: EmbeddedStore) async throws -> Set<String> {
        let all = try await store.client(user: "alice").fetchAllZoneChanges(room, since: nil, scope: .private)
        return Set(all.changed.map(\.id.recordName))
    }

    @Test("cutting the journal at every byte inside its last entry yields exactly the entries before it")
    func cutAtEveryOffset() async throws {
        let dir = tempDir()
        let store = try open(dir)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        for i in 0..<5 { try await alice.save([record("r\(i)", ["v": .string(String(repeating: "x", count: i * 7))])]) }
        store.close()

        let journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dir)/journal-0.log")))
        let scan = try JournalFormat.scan(journal)
        #expect(scan.entries.count == 6)
        #expect(scan.tornBytes == 0)
        let lastStart = scan.validLength - scan.entries.last!.count - JournalFormat.entryHeaderSize
        let before: Set<String> = ["r0", "r1", "r2", "r3"]

        for cut in lastStart..<journal.count {
            let copy = tempDir()
            try Data(journal[0..<cut]).write(to: URL(fileURLWithPath: "\(copy)/journal-0.log"))
            let reopened = try open(copy)
            #expect(try await names(reopened) == before, "cut at \(cut)")
            #expect(reopened.recovered?.entriesReplayed == 5)
            #expect(reopened.recovered?.tornBytesDropped == cut - lastStart)
            // The torn tail is gone from the file: a new write lands and survives another reopen.
            try await reopened.client(user: "alice").save([record("after")])
            reopened.close()
            let again = try open(copy)
            #expect(try await names(again) == before.union(["after"]))
            #expect(again.recovered?.tornBytesDropped == 0)
            again.close()
            try? FileManager.default.removeItem(atPath: copy)
        }
        // Uncut, all five are there.
        let whole = try open(dir)
        #expect(try await names(whole) == before.union(["r4"]))
        whole.close()
    }

    @Test("a flipped bit inside the last entry drops it as a torn tail")
    func corruptLastEntry() async throws {
        let dir = tempDir()
        let store = try open(dir)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await alice.save([record("kept")])
        try await alice.save([record("torn")])
        store.close()
        let path = "\(dir)/journal-0.log"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - 3] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reopened = try open(dir)
        #expect(try await names(reopened) == ["kept"])
        reopened.close()
    }

    @Test("damage before more unreadable bytes than one batch can leave is refused, not dropped")
    func damageIsRefused() throws {
        let dir = tempDir()
        var bytes = JournalFormat.header(generation: 0)
        var w = ByteWriter()
        MutationCodec.encode([.registerDevice(user: "a", deviceID: "d")], into: &w)
        for _ in 0..<10 { JournalFormat.frame(w.bytes, into: &bytes) }
        bytes[JournalFormat.headerSize + 9] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/journal-0.log"))
        #expect(throws: StoreDirectory.OpenError.self) {
            _ = try StoreDirectory.open(path: dir, policy: .none, configuration: .default, maxTornTail: 64)
        }
    }

    @Test("change tokens issued before a reopen still work after it")
    func tokensSurviveReopen() async throws {
        let dir = tempDir()
        let clock = ManualClock()
        var store = try open(dir, clock: clock)
        var alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await alice.save([record("a"), record("b")])
        let zoneToken = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken
        let dbToken = try await alice.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .private).syncToken
        store.close()

        store = try open(dir, clock: clock)
        alice = store.client(user: "alice")
        let quiet = try await alice.fetchZoneChanges(room, since: zoneToken, resultsLimit: nil, scope: .private)
        #expect(quiet.changed.isEmpty && quiet.deleted.isEmpty)
        try await alice.save([record("c")])
        _ = try await alice.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "a", zoneID: room)]),
                                          scope: .private)
        let delta = try await alice.fetchZoneChanges(room, since: zoneToken, resultsLimit: nil, scope: .private)
        #expect(delta.changed.map(\.id.recordName) == ["c"])
        #expect(delta.deleted.map(\.id.recordName) == ["a"])
        let db = try await alice.fetchDatabaseChanges(since: dbToken, resultsLimit: nil, scope: .private)
        #expect(db.changedZones.map(\.zoneName) == ["room_a"])
        store.close()
    }

    @Test("shares, subscriptions and devices survive a reopen")
    func sharesSurviveReopen() async throws {
        let dir = tempDir()
        var store = try open(dir)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        let share = try await alice.createShare(zone: room, publicPermission: .none, participants: ["bob": .readOnly])
        let guid = try #require(share.shortGUID)
        _ = try await store.client(user: "bob").acceptShare(zone: ZoneID(zoneName: "room_a", ownerName: "alice"))
        _ = try await alice.modifySubscriptions(save: [Subscription(subscriptionID: "s", kind: .database)], delete: [],
                                                scope: .private)
        store.close()
        store = try open(dir)
        let bob = store.client(user: "bob")
        #expect(try await bob.listZones(scope: .shared) == [ZoneID(zoneName: "room_a", ownerName: "alice")])
        let w = try await bob.modifyRecords(ModifyRecordsRequest(saves: [record("x", in: ZoneID(zoneName: "room_a", ownerName: "alice"))]),
                                            scope: .shared)
        #expect(w.results[0].error?.code == .permissionFailure)
        #expect(try await bob.resolveShare(shortGUID: guid).share.zoneID == ZoneID(zoneName: "room_a", ownerName: "alice"))
        #expect(try await store.client(user: "alice").listSubscriptions(scope: .private).map(\.subscriptionID) == ["s"])
        store.close()
    }

    @Test("compaction writes a snapshot; state, tokens and recent deletions survive it and a reopen")
    func compaction() async throws {
        let dir = tempDir()
        let clock = ManualClock()
        var store = try open(dir, clock: clock, compactAt: 4096)
        var alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await alice.save([record("doomed")])
        let guid = try #require(try await alice.createShare(zone: room, publicPermission: .readOnly,
                                                            participants: [:]).shortGUID)
        let token = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken
        _ = try await alice.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "doomed", zoneID: room)]),
                                          scope: .private)
        for i in 0..<60 { try await alice.save([record("r\(i)", ["pad": .bytes([UInt8](repeating: 9, count: 200))])]) }
        let generation = try #require(store.journalStatistics?.generation)
        #expect(generation >= 2)
        #expect(store.journalStatistics!.fileBytes < 4096 + 512)
        store.close()

        store = try open(dir, clock: clock, compactAt: 4096)
        alice = store.client(user: "alice")
        #expect(store.recovered?.generation == generation)
        let delta = try await alice.fetchAllZoneChanges(room, since: token, scope: .private)
        #expect(delta.changed.count == 60)
        #expect(delta.deleted.map(\.id.recordName) == ["doomed"])
        // The snapshot keeps the share's short GUID (share flag 2).
        #expect(try await store.client(user: "eve").resolveShare(shortGUID: guid).share.zoneID.zoneName == "room_a")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("journal-") }
        #expect(files == ["journal-\(generation).log"])
        store.close()
    }

    @Test("every fsync policy acknowledges durable writes that a reopen finds", arguments: FsyncPolicy.allCases)
    func fsyncPolicies(_ policy: FsyncPolicy) async throws {
        let dir = tempDir()
        var store = try open(dir, fsync: policy)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                group.addTask {
                    for i in 0..<10 { try await alice.save([record("w\(w)-\(i)")]) }
                }
            }
            try await group.waitForAll()
        }
        if policy != .none { #expect(store.journalStatistics!.syncs > 0) }
        if policy == .always {
            // One sync per entry, made by the flusher: no writer waited for the disk under the store's lock.
            let stats = try #require(store.journalStatistics)
            #expect(stats.syncs == stats.entries, "\(stats.syncs) syncs for \(stats.entries) entries")
        }
        store.close()
        store = try open(dir, fsync: policy)
        #expect(try await names(store).count == 80)
        store.close()
    }

    @Test("a second process cannot open the same directory")
    func directoryLock() throws {
        let dir = tempDir()
        let first = try open(dir)
        #expect(throws: EmbeddedStore.OpenError.self) { _ = try open(dir) }
        first.close()
    }

    @Test("a damaged snapshot is refused with a clear error")
    func damagedSnapshot() async throws {
        let dir = tempDir()
        let store = try open(dir, compactAt: 512)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        for i in 0..<10 { try await alice.save([record("r\(i)", ["pad": .bytes([UInt8](repeating: 1, count: 100))])]) }
        store.close()
        let path = "\(dir)/snapshot"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[20] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try open(dir)
            Issue.record("a damaged snapshot was accepted")
        } catch {
            #expect("\(error)".contains("checksum"))
        }
    }
}
