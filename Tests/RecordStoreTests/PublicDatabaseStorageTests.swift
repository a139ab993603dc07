import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// Public records are kept like any zone's: journalled, snapshotted, replayed; their creator with them,
/// so that only the creator may change them after a restart too.
@Suite("Public database storage")
struct PublicDatabaseStorageTests {
    private func open(_ dir: String, compactAt: Int) throws -> EmbeddedStore {
        var options = EmbeddedStore.Options(directory: dir)
        options.automaticPush = false
        options.compactionThreshold = compactAt
        return try EmbeddedStore(options: options, clock: ManualClock())
    }

    private func board(_ name: String, _ pad: Int = 0) -> Record {
        Record(recordType: "Board", id: RecordID(recordName: name),
               fields: ["pad": .bytes([UInt8](repeating: 1, count: pad))])
    }

    @Test("public records survive a reopen from the journal and from a snapshot, creator and all",
          arguments: [64 << 20, 4096])
    func survivesReopen(compactAt: Int) async throws {
        let dir = NSTemporaryDirectory() + "zonertc-public-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try open(dir, compactAt: compactAt)
        try await store.client(user: "alice").save([board("kept")], scope: .public)
        for i in 0..<30 { try await store.client(user: "bob").save([board("b\(i)", 300)], scope: .public) }
        if compactAt < 1 << 20 { #expect((store.journalStatistics?.generation ?? 0) >= 2) }
        store.close()

        store = try open(dir, compactAt: compactAt)
        defer { store.close() }
        let found = try await store.client(user: "carol").lookupRecords([RecordID(recordName: "kept")], scope: .public)
        let kept = try #require(found.first?.record)
        #expect(kept.id.zoneID == .publicZone)
        #expect(kept.created?.userRecordName == "alice")
        let bob = store.client(user: "bob")
        let refused = try await bob.modifyRecords(ModifyRecordsRequest(saves: [board("kept")], savePolicy: .allKeys),
                                                  scope: .public)
        #expect(refused.failures.first?.1.code == .permissionFailure)
        // Nothing of it reached anyone's private database.
        let privately = try await store.client(user: "alice").lookupRecords([RecordID(recordName: "kept")],
                                                                           scope: .private)
        #expect(privately.first?.error?.code == .unknownItem)
    }

    @Test("the anonymous reader reads the public database and nothing else")
    func anonymousReader() throws {
        var engine = StoreEngine()
        let now = Instant(nanosecondsSinceEpoch: 1_000_000_000)
        let alice = RequestContext(user: "alice", now: now)
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [board("open")]), scope: .public, alice)
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [board("hers")]), scope: .private, alice)
        let anonymous = RequestContext.anonymous(now: now)
        #expect(anonymous.isAnonymous)
        let open = try engine.lookupRecords([RecordID(recordName: "open")], scope: .public, anonymous)
        #expect(open.first?.record != nil)
        let hersID = RecordID(recordName: "hers", zoneID: ZoneID(zoneName: "_defaultZone", ownerName: "alice"))
        let hers = try engine.lookupRecords([hersID], scope: .private, anonymous)
        #expect(hers.first?.error?.code == .notAuthenticated)
        let write = try engine.modifyRecords(ModifyRecordsRequest(saves: [board("mine")]), scope: .public, anonymous)
        #expect(write.failures.first?.1.code == .notAuthenticated)
        #expect(throws: StoreError.self) { try engine.listZones(scope: .private, anonymous) }
    }
}
