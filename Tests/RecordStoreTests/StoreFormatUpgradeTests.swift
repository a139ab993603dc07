// Journals, snapshots and shared-log entries written before record format 2 still load
// (Fixtures/store-format-1, written by the store at commit 9b34d3e: Fixtures/README.md), and a
// store opened on them goes on writing in the current format beside them.
import Foundation
#if PostgreSQL
import PostgresStore
#endif
@testable import RecordStore
import Testing
import TestSupport
import ZoneCore

@Suite("Store formats: record format 1 still loads", .serialized)
struct StoreFormatUpgradeTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/store-format-1").path
    static let room = ZoneID(zoneName: "room_fx", ownerName: "alice")

    /// A copy of the fixture directory `name`, to open (opening writes a LOCK and appends).
    private func copy(_ name: String) throws -> String {
        let dir = NSTemporaryDirectory() + "zonertc-format1-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: "\(Self.fixtures)/\(name)", toPath: dir)
        return dir
    }

    private func open(_ dir: String, compactAt: Int = 64 * 1024 * 1024) throws -> EmbeddedStore {
        var options = EmbeddedStore.Options(directory: dir)
        options.automaticPush = false
        options.compactionThreshold = compactAt
        return try EmbeddedStore(options: options, clock: ManualClock(start: .seconds(1_700_000_100)))
    }

    /// What the fixture holds, read through a store of today's build.
    private func expectFixtureContent(_ store: any StoreBackend) async throws {
        let alice = store.client(user: "alice", deviceID: "phone")
        let found = try await alice.lookupRecords(
            ["kinds", "target", "doomed", "late"].map { RecordID(recordName: $0, zoneID: Self.room) }, scope: .private)
        let kinds = try #require(found[0].record)
        #expect(kinds.fields["s"] == .string("héllo") && kinds.fields["i"] == .int64(.min))
        #expect(kinds.fields["d"] == .double(0.1) && kinds.fields["t"] == .timestamp(1_700_000_000_123))
        #expect(kinds.fields["b"] == .bytes([0, 1, 255]))
        // As it was written: the zone without its owner, the action NONE (format 1 had no actions).
        #expect(kinds.fields["r"] == .reference(Reference(RecordID(recordName: "target",
                                                                   zoneID: ZoneID(zoneName: "room_fx")))))
        #expect(kinds.fields["sl"] == .list([.string("a"), .string("b")]))
        #expect(kinds.fields["el"] == .emptyList(elementType: "INT64"))
        #expect(kinds.fields["mixed"] == .list([.int64(1), .string("x"), .list([.double(2.5)])]))
        #expect(kinds.created?.userRecordName == "alice" && kinds.created?.deviceID == nil && kinds.parent == nil)
        #expect(found[1].record?.fields["v"] == .int64(10))
        #expect(found[2].error?.code == .unknownItem && found[3].record?.fields["v"] == .int64(3))
        let home = try await alice.lookupRecords([RecordID(recordName: "home")], scope: .private)
        #expect(home[0].record?.fields["v"] == .string("d"))
        #expect(try await alice.listSubscriptions(scope: .private).map(\.subscriptionID) == ["sub"])
        let bob = store.client(user: "bob", deviceID: "laptop")
        let shared = try await bob.lookupRecords([RecordID(recordName: "late", zoneID: Self.room)], scope: .shared)
        #expect(shared[0].record != nil)
        let devices = try await store.perform(user: "bob", deviceID: nil, access: .read) { e, _ throws(StoreError) in
            e.registeredDeviceCount
        }
        #expect(devices == 1)
    }

    @Test("a journal of record format 1 loads, and the store writes format 2 after it")
    func journal() async throws {
        let dir = try copy("journal")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try open(dir)
        try await expectFixtureContent(store)
        let alice = store.client(user: "alice", deviceID: "phone")
        let located = Record(recordType: "Place", id: RecordID(recordName: "place", zoneID: Self.room),
                             fields: ["at": .location(Location(latitude: 1, longitude: 2))], parent: "kinds")
        try await alice.save([located])
        store.close()
        store = try open(dir)
        try await expectFixtureContent(store)
        let back = try await client(store).lookupRecords([located.id], scope: .private)
        #expect(back[0].record?.fields == located.fields && back[0].record?.parent == "kinds")
        #expect(back[0].record?.modified?.deviceID == "phone")
        store.close()
    }

    @Test("a snapshot of version 1 and its journal load; the next compaction writes snapshot 2")
    func snapshot() async throws {
        let dir = try copy("compacted")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try open(dir, compactAt: 1)
        #expect(store.recovered?.snapshotBytes ?? 0 > 0)
        try await expectFixtureContent(store)
        // Past the threshold, this save compacts: the snapshot is rewritten in version 2.
        try await client(store).save([Record(recordType: "Note", id: RecordID(recordName: "after", zoneID: Self.room))])
        store.close()
        let bytes = try #require(FileManager.default.contents(atPath: "\(dir)/snapshot"))
        #expect(Array(bytes.prefix(8)) == SnapshotCodec.magic)
        store = try open(dir)
        try await expectFixtureContent(store)
        store.close()
    }

    @Test("a shared-log entry of version 1 (what PostgreSQL holds from before) decodes")
    func sharedLogEntry() throws {
        let journal = try #require(FileManager.default.contents(atPath: "\(Self.fixtures)/journal/journal-0.log"))
        let scan = try JournalFormat.scan([UInt8](journal))
        #expect(scan.entries.count > 5 && scan.damage == nil)
        for payload in scan.entries {
            // A version 1 log entry: the version, the journal's mutations, no notifications.
            let entry = [UInt8(1)] + Array(payload) + [0]
            let (mutations, notes) = try SharedLogEntryCodec.decode(entry)
            var r = ByteReader(Array(payload))
            #expect(mutations == (try MutationCodec.decodeMutations(&r)) && notes.isEmpty)
        }
        let future = [SharedLogEntryCodec.readable.upperBound + 1] + Array(scan.entries[0]) + [0]
        #expect(throws: MutationCodec.DecodeError.self) { try SharedLogEntryCodec.decode(future) }
    }

    @Test("a record format or snapshot version this build does not know is refused, naming it")
    func unknownVersions() throws {
        var w = ByteWriter(capacity: 16)
        w.writeVarint(1)
        w.writeUInt8(10)
        w.writeUInt8(9)
        var r = ByteReader(w.bytes)
        #expect {
            try MutationCodec.decodeMutations(&r)
        } throws: { "\($0)".contains("record format 9") }
        let snapshot = Array("ZRSNAP9\n".utf8) + [UInt8](repeating: 0, count: 16)
        #expect {
            try SnapshotCodec.decode(snapshot)
        } throws: { "\($0)".contains("version '9'") }
    }

    #if PostgreSQL
    @Test("a PostgreSQL database at schema 4 holding a version 1 snapshot and log migrates and serves them",
          .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
    func postgres() async throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let options = PostgresStore.Options(url: cluster.url(schema: schema))
        try await PostgresStore.open(options: options).close()
        // What a database of the earlier build holds: the snapshot (generation 1) as its row after
        // entry 1, the journal that extends it as version 1 log entries 2…, schema version 4.
        let snapshotFile = [UInt8](try #require(FileManager.default.contents(
            atPath: "\(Self.fixtures)/compacted/snapshot")))
        let snapshot = snapshotFile.dropLast(4)
        let journal = [UInt8](try #require(FileManager.default.contents(
            atPath: "\(Self.fixtures)/compacted/journal-1.log")))
        let entries = try JournalFormat.scan(journal).entries
        func hex(_ bytes: some Collection<UInt8>) -> String {
            "'\\x" + Hex.encode(bytes) + "'::bytea"
        }
        var sql = """
            DELETE FROM \(schema).zonertc_migrations WHERE version >= 5;
            INSERT INTO \(schema).zonertc_snapshot (seq, state) VALUES (1, \(hex(snapshot)));
            """
        for (i, payload) in entries.enumerated() {
            sql += "INSERT INTO \(schema).zonertc_log (seq, entry) VALUES (\(i + 2), \(hex([1] + payload + [0])));\n"
        }
        let last = entries.count + 1
        sql += """
            UPDATE \(schema).zonertc_head SET seq = \(last);
            INSERT INTO \(schema).zonertc_durable (daemon, seq) VALUES (0, \(last))
                ON CONFLICT (daemon) DO UPDATE SET seq = \(last);
            """
        try cluster.sql(sql)
        #expect(try cluster.sql("SELECT max(version) FROM \(schema).zonertc_migrations") == "4")
        var reopened = options
        reopened.automaticPush = false
        let store = try await PostgresStore.open(options: reopened, clock: ManualClock(start: .seconds(1_700_000_100)))
        defer { store.close() }
        #expect(try cluster.sql("SELECT max(version) FROM \(schema).zonertc_migrations") == "13")
        try await expectFixtureContent(store)
        try await store.client(user: "alice", deviceID: "phone").save([Record(
            recordType: "Note", id: RecordID(recordName: "after", zoneID: Self.room),
            fields: ["a": .asset(Asset(fileChecksum: "c", size: 1))])])
        // The entry written now is of this build's version (3: shares with short GUIDs).
        let newest = "SELECT get_byte(entry, 0) FROM \(schema).zonertc_log ORDER BY seq DESC LIMIT 1"
        #expect(try cluster.sql(newest) == "3")
    }
    #endif

    private func client(_ store: EmbeddedStore) -> EmbeddedStoreClient {
        store.client(user: "alice", deviceID: "phone")
    }
}
