import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// A zone-wide share's own fields (`ZoneShare.fields`: title, thumbnail, type) are durable: journal
/// tag 17, snapshot 6 (share flag 3) and log entries of version 7, each written only for a share
/// that has them. A record share keeps them as fields of its record, in the formats records have.
@Suite("Share fields: formats")
struct ShareFieldsFormatTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")

    @Test("tag 17, log entry 7 and snapshot 6 only for a zone-wide share with fields; they round-trip")
    func formats() throws {
        let fields: RecordFields = ["cloudkit.title": .string("Holiday"), "cloudkit.thumbnailImageData": .bytes([1, 2])]
        let with = ZoneShare(zoneID: room, changeTag: "2", shortGUID: "abcdefghjkmnpqrs0123456789", fields: fields)
        let without = ZoneShare(zoneID: room, changeTag: "3", shortGUID: "abcdefghjkmnpqrs0123456789")
        var w = ByteWriter(capacity: 128)
        MutationCodec.encode([.putShare(with), .putShare(without)], into: &w)
        #expect(w.bytes[1] == 17)
        var r = ByteReader(w.bytes)
        #expect(try MutationCodec.decodeMutations(&r) == [.putShare(with), .putShare(without)])
        let entry = SharedLogEntryCodec.encode([.putShare(with)], [])
        #expect(entry.first == SharedLogEntryCodec.versionWithShareFields)
        #expect(try SharedLogEntryCodec.decode(entry).0 == [.putShare(with)])
        #expect(SharedLogEntryCodec.encode([.putShare(without)], []).first == SharedLogEntryCodec.version)

        var engine = StoreEngine()
        engine.replay(.createZone(room, incarnation: 1, atMs: 0))
        engine.replay(.putShare(without))
        let plain = SnapshotCodec.encode(engine.state, generation: 1, pruneTombstonesBeforeMs: 0)
        #expect(Array(plain.prefix(8)) == SnapshotCodec.magic)
        engine.replay(.putShare(with))
        let bytes = SnapshotCodec.encode(engine.state, generation: 2, pruneTombstonesBeforeMs: 0)
        #expect(Array(bytes.prefix(8)) == SnapshotCodec.magicWithShareFields)
        let back = try SnapshotCodec.decode(bytes).state
        #expect(back.zones[room]?.share?.fields == fields)
        #expect(back.shortGUIDs["abcdefghjkmnpqrs0123456789"] == .zoneShare(room))
    }

    @Test("a record share's fields are fields of its record: parsed back with the share")
    func recordShareFields() {
        var share = ZoneShare(zoneID: room, changeTag: "", fields: ["cloudkit.type": .string("com.example.album")])
        share.rootRecordName = "album"
        let record = Record(recordType: RecordShare.recordType, id: RecordID(recordName: "album-share", zoneID: room),
                            fields: RecordShare.fields(of: share))
        #expect(RecordShare.share(in: record)?.fields == share.fields)
    }
}
