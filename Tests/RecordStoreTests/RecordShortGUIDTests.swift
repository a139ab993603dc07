import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// Records with a short GUID of their own (records/modify `createShortGUID`): kept by saves, found
/// by records/resolve through the short GUID index, and durable in record format 3 (journal tag 10),
/// snapshot 5 and log entries of version 6 — each written only where such a record exists.
@Suite("Records with short GUIDs")
struct RecordShortGUIDTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")
    let guid = "abcdefghjkmnpqrs0123456789"

    private func resolvedName(_ store: EmbeddedStore, _ user: String, _ guid: String) async throws -> String? {
        guard case .record(let r) = try await store.client(user: user).resolve(shortGUID: guid) else { return nil }
        return r.record.id.recordName
    }

    @Test("formats: record format 3, log entry 6 and snapshot 5 only with such a record; others refused by name")
    func formats() throws {
        var with = record("poster", in: room)
        with.shortGUID = guid
        let without = record("plain", in: room)
        var w = ByteWriter(capacity: 128)
        MutationCodec.encode([.putRecord(with), .putRecord(without)], into: &w)
        var r = ByteReader(w.bytes)
        #expect(try MutationCodec.decodeMutations(&r) == [.putRecord(with), .putRecord(without)])
        #expect(Array(w.bytes[1...2]) == [10, MutationCodec.recordFormatWithShortGUID])
        #expect(SharedLogEntryCodec.encode([.putRecord(with)], []).first == SharedLogEntryCodec.versionWithShortGUIDs)
        #expect(SharedLogEntryCodec.encode([.putRecord(without)], []).first == SharedLogEntryCodec.version)
        let entry = SharedLogEntryCodec.encode([.putRecord(with)], [])
        #expect(try SharedLogEntryCodec.decode(entry).0 == [.putRecord(with)])
        // A format this build does not know is refused, naming the upgrade.
        var future = w.bytes
        future[2] = 4
        var fr = ByteReader(future)
        #expect { _ = try MutationCodec.decodeMutations(&fr) } throws: {
            "\($0)".contains("record format 4") && "\($0)".contains("upgrade zonertc")
        }

        var engine = StoreEngine()
        for m in [Mutation.createZone(room, incarnation: 1, atMs: 0), .putRecord(without)] { engine.replay(m) }
        let plain = SnapshotCodec.encode(engine.state, generation: 1, pruneTombstonesBeforeMs: 0)
        #expect(Array(plain.prefix(8)) == SnapshotCodec.magic)
        engine.replay(.putRecord(with))
        let bytes = SnapshotCodec.encode(engine.state, generation: 2, pruneTombstonesBeforeMs: 0)
        #expect(Array(bytes.prefix(8)) == SnapshotCodec.magicWithShortGUIDs)
        let back = try SnapshotCodec.decode(bytes).state
        #expect(back.zones[room]?.records[RecordKey("poster")]?.shortGUID == guid)
        #expect(back.shortGUIDs[guid] == .record(RecordID(recordName: "poster", zoneID: room)))
        // Deleted, it is gone from the index and the snapshot need not be 5 any more.
        engine.replay(.deleteRecord(RecordID(recordName: "poster", zoneID: room), recordType: "Note", atMs: 9))
        #expect(engine.state.shortGUIDs[guid] == nil && !engine.state.shortGUIDs.holdsRecords)
        let after = SnapshotCodec.encode(engine.state, generation: 3, pruneTombstonesBeforeMs: 0)
        #expect(Array(after.prefix(8)) == SnapshotCodec.magic)
    }

    @Test("the index follows zone deletion and zone-wide shares")
    func indexFollowsZonesAndShares() {
        var engine = StoreEngine()
        var with = record("poster", in: room)
        with.shortGUID = guid
        let zoneGUID = "zyxwvutsrqpnmkjhgfedcba987"
        for m in [Mutation.createZone(room, incarnation: 1, atMs: 0), .putRecord(with),
                  .putShare(ZoneShare(zoneID: room, changeTag: "1", shortGUID: zoneGUID))] {
            engine.replay(m)
        }
        #expect(engine.state.shortGUIDs[zoneGUID] == .zoneShare(room))
        engine.replay(.deleteShare(room))
        #expect(engine.state.shortGUIDs[zoneGUID] == nil && engine.state.shortGUIDs[guid] != nil)
        engine.replay(.deleteZone(room, purged: false))
        #expect(engine.state.shortGUIDs[guid] == nil && !engine.state.shortGUIDs.holdsRecords)
    }

    @Test("a record's short GUID resolves after a reopen (journal) and after compaction (snapshot 5)")
    func durable() async throws {
        let dir = StoreDirectoryFixture.tempDir("shortguid")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try StoreDirectoryFixture.open(dir)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        var poster = record("poster", in: room)
        poster.shortGUID = guid
        try await alice.save([poster])
        #expect(try await resolvedName(store, "alice", guid) == "poster")
        store.close()

        store = try StoreDirectoryFixture.open(dir)
        #expect(try await resolvedName(store, "alice", guid) == "poster")
        await #expect(throws: StoreError.self) { _ = try await store.client(user: "eve").resolve(shortGUID: guid) }
        store.close()

        store = try StoreDirectoryFixture.open(dir, compactAt: 64)
        try await store.client(user: "alice").save([record("pad", in: room)])
        #expect((store.journalStatistics?.generation ?? 0) >= 1)
        store.close()
        let snapshot = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dir)/snapshot")))
        #expect(Array(snapshot.prefix(8)) == SnapshotCodec.magicWithShortGUIDs)
        store = try StoreDirectoryFixture.open(dir)
        #expect(try await resolvedName(store, "alice", guid) == "poster")
        store.close()
    }
}
