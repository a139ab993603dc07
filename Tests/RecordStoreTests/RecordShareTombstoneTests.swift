import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// Deletions keep the record shares' roots whose hierarchy held the record (`Tombstone.sharedRoots`),
/// so a record-share participant's `changes/zone` lists only deletions of records they could read:
/// in the engine, through the journal (tag 16) cut anywhere, in snapshot 4, and in log entries of
/// version 5; deletions an earlier build journalled (tag 4) still reach every participant.
@Suite("Record shares: deletions by hierarchy")
struct RecordShareTombstoneTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")
    let guid = "0123456789abcdefghjkmnpqrs"

    private func tempDir() -> String { StoreDirectoryFixture.tempDir("tombroots") }

    private func open(_ dir: String, compactAt: Int = 64 << 20) throws -> EmbeddedStore {
        try StoreDirectoryFixture.open(dir, compactAt: compactAt)
    }

    private func note(_ name: String, parent: String?) -> Record {
        var r = record(name, in: room)
        r.parent = parent
        return r
    }

    /// alice's `album` ← `photo` ← `comment`, an unshared `other` ← `loose`, and `album-share` for
    /// `album`, accepted by bob. Returns bob's change token from after his acceptance.
    private func sharedAlbum(_ store: EmbeddedStore) async throws -> ChangeToken {
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        var share = ZoneShare(zoneID: room, participants: ["bob": ShareParticipant(userRecordName: "bob",
                                                                                    permission: .readOnly)],
                              changeTag: "", shortGUID: guid)
        share.shareRecordName = "album-share"
        share.rootRecordName = "album"
        let shareRecord = Record(recordType: RecordShare.recordType,
                                 id: RecordID(recordName: "album-share", zoneID: room),
                                 fields: RecordShare.fields(of: share))
        let saved = try await alice.modifyRecords(ModifyRecordsRequest(operations: [
            .create(note("album", parent: nil)), .create(shareRecord), .create(note("photo", parent: "album")),
            .create(note("comment", parent: "photo")), .create(note("other", parent: nil)),
            .create(note("loose", parent: "other")),
        ]), scope: .private)
        #expect(saved.results.allSatisfy { if case .saved = $0 { true } else { false } }, "\(saved)")
        let bob = store.client(user: "bob")
        _ = try await bob.acceptShare(shortGUID: guid)
        return try await bob.fetchAllZoneChanges(room, since: nil, scope: .shared).syncToken
    }

    /// Deletes `photo` before its child `comment`, and `loose` and `other`, in one request.
    private func deleteSome(_ store: EmbeddedStore) async throws {
        let ids = ["photo", "comment", "loose", "other"].map { RecordID(recordName: $0, zoneID: room) }
        _ = try await store.client(user: "alice").modifyRecords(ModifyRecordsRequest(deletes: ids), scope: .private)
    }

    private func deletions(_ store: EmbeddedStore, _ user: String, since token: ChangeToken) async throws -> [String] {
        let scope: DatabaseScope = user == "alice" ? .private : .shared
        let changes = try await store.client(user: user).fetchAllZoneChanges(room, since: token, scope: scope)
        return changes.deleted.map(\.id.recordName).sorted()
    }

    @Test("a participant hears of deletions in their hierarchy only, after a reopen and after a snapshot")
    func participantSeesOwnHierarchy() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try open(dir)
        let token = try await sharedAlbum(store)
        let ownerToken = try await store.client(user: "alice").fetchAllZoneChanges(room, since: nil,
                                                                                    scope: .private).syncToken
        try await deleteSome(store)
        #expect(try await deletions(store, "bob", since: token) == ["comment", "photo"])
        #expect(try await deletions(store, "alice", since: ownerToken) == ["comment", "loose", "other", "photo"])
        store.close()

        store = try open(dir)
        #expect(store.recovered?.entriesReplayed ?? 0 > 0)
        #expect(try await deletions(store, "bob", since: token) == ["comment", "photo"])
        store.close()

        // Compacted: snapshot 4 keeps the roots.
        store = try open(dir, compactAt: 64)
        try await store.client(user: "alice").save([record("pad", in: room)])
        #expect((store.journalStatistics?.generation ?? 0) >= 1)
        store.close()
        let snapshot = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dir)/snapshot")))
        #expect(Array(snapshot.prefix(8)) == SnapshotCodec.magicWithSharedRoots)
        store = try open(dir)
        #expect(try await deletions(store, "bob", since: token) == ["comment", "photo"])
        #expect(try await deletions(store, "alice", since: ownerToken) == ["comment", "loose", "other", "photo"])
        store.close()
    }

    @Test("a journal cut anywhere in the deleting entry: all of its deletions or none, none leaked")
    func cutAtEveryOffset() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try open(dir)
        let token = try await sharedAlbum(store)
        try await deleteSome(store)
        store.close()
        let journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dir)/journal-0.log")))
        let scan = try JournalFormat.scan(journal)
        let last = try #require(scan.entries.last)
        var r = ByteReader(Array(last))
        let mutations = try MutationCodec.decodeMutations(&r)
        #expect(mutations.contains { if case .deleteRecord(_, _, _, ["album"]?) = $0 { true } else { false } })
        #expect(mutations.contains { if case .deleteRecord(_, _, _, []?) = $0 { true } else { false } })
        let lastStart = scan.validLength - last.count - JournalFormat.entryHeaderSize
        // Every 7th byte of the entry and its last: a cut in its header, its middle and its end.
        for cut in Array(stride(from: lastStart, to: journal.count, by: 7)) + [journal.count - 1, journal.count] {
            let copy = tempDir()
            defer { try? FileManager.default.removeItem(atPath: copy) }
            try Data(journal[0..<cut]).write(to: URL(fileURLWithPath: "\(copy)/journal-0.log"))
            let reopened = try open(copy)
            let seen = try await deletions(reopened, "bob", since: token)
            #expect(seen == (cut == journal.count ? ["comment", "photo"] : []), "cut at \(cut)")
            reopened.close()
        }
    }

    @Test("formats: tag 16 only with roots, log entry 5 only then, snapshot 4 only then; tag 4 keeps no roots")
    func formats() throws {
        let id = RecordID(recordName: "photo", zoneID: room)
        let with = Mutation.deleteRecord(id, recordType: "Note", atMs: 7, sharedRoots: ["album", "box"])
        let without = Mutation.deleteRecord(id, recordType: "Note", atMs: 7)
        var w = ByteWriter(capacity: 64)
        MutationCodec.encode([with, without], into: &w)
        #expect(w.bytes[1] == 16)
        var r = ByteReader(w.bytes)
        #expect(try MutationCodec.decodeMutations(&r) == [with, without])
        #expect(SharedLogEntryCodec.encode([with], []).first == SharedLogEntryCodec.versionWithSharedRoots)
        #expect(SharedLogEntryCodec.encode([without], []).first == SharedLogEntryCodec.version)
        #expect(try SharedLogEntryCodec.decode(SharedLogEntryCodec.encode([with], [])).0 == [with])
        // A damaged name count is an error, never an allocation.
        var bad = ByteWriter(capacity: 16)
        bad.writeVarint(1 << 40)
        var br = ByteReader(bad.bytes)
        #expect(throws: MutationCodec.DecodeError.self) { _ = try MutationCodec.decodeNames(&br) }

        var engine = StoreEngine()
        for m in [Mutation.createZone(room, incarnation: 1, atMs: 0), .putRecord(record("photo", in: room)),
                  .putRecord(record("old", in: room)), with,
                  .deleteRecord(RecordID(recordName: "old", zoneID: room), recordType: "Note", atMs: 8)] {
            engine.replay(m)
        }
        let bytes = SnapshotCodec.encode(engine.state, generation: 2, pruneTombstonesBeforeMs: 0)
        #expect(Array(bytes.prefix(8)) == SnapshotCodec.magicWithSharedRoots)
        let back = try SnapshotCodec.decode(bytes).state
        #expect(back.zones[room]?.tombstones[RecordKey("photo")]?.sharedRoots == ["album", "box"])
        #expect(back.zones[room]?.tombstones[RecordKey("old")]?.sharedRoots == nil)
        // Pruned past the tombstones, nothing needs snapshot 4.
        let pruned = SnapshotCodec.encode(engine.state, generation: 2, pruneTombstonesBeforeMs: 100)
        #expect(Array(pruned.prefix(8)) == SnapshotCodec.magic)
    }

    @Test("a deletion an earlier build kept no roots for: listed to a participant fetching with a token, never without")
    func rootlessTombstones() throws {
        var share = ZoneShare(zoneID: room, participants: ["bob": ShareParticipant(userRecordName: "bob",
                                                                                    permission: .readOnly,
                                                                                    status: .accepted)],
                              changeTag: "3", shortGUID: guid)
        share.shareRecordName = "album-share"
        share.rootRecordName = "album"
        let shareID = RecordID(recordName: "album-share", zoneID: room)
        let shareRecord = Record(recordType: RecordShare.recordType, id: shareID,
                                 fields: RecordShare.fields(of: share), recordChangeTag: "3")
        var engine = StoreEngine()
        for m in [Mutation.createZone(room, incarnation: 1, atMs: 0), .putRecord(note("album", parent: nil)),
                  .putRecord(shareRecord), .putRecord(note("elsewhere", parent: nil))] {
            engine.replay(m)
        }
        let bob = RequestContext(user: "bob", now: Instant(nanosecondsSinceEpoch: 2_000_000_000))
        let token = try engine.fetchZoneChanges(room, since: nil, scope: .shared, bob).syncToken
        // As an earlier build journalled it (tag 4): no roots kept.
        engine.replay(.deleteRecord(RecordID(recordName: "elsewhere", zoneID: room), recordType: "Note", atMs: 5))
        // With a token the client may hold the record: it hears of the deletion (by name and type).
        let since = try engine.fetchZoneChanges(room, since: token, scope: .shared, bob)
        #expect(since.deleted.map(\.id.recordName) == ["elsewhere"])
        // From scratch it holds nothing: no deletion is listed, so none it could not read.
        let fresh = try engine.fetchZoneChanges(room, since: nil, scope: .shared, bob)
        #expect(fresh.deleted.isEmpty && fresh.changed.map(\.id.recordName).sorted() == ["album", "album-share"])
    }
}
