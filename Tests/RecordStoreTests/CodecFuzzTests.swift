import Testing
@testable import RecordStore
import ZoneCore

/// Hostile bytes into the journal's decoders: they fail with errors, never crash or hang.
@Suite("Journal codecs under hostile input")
struct CodecFuzzTests {
    private func sampleEntry() -> [UInt8] {
        var w = ByteWriter()
        let zone = ZoneID(zoneName: "room_a", ownerName: "alice")
        let rec = Record(recordType: "SignalEnvelope", id: RecordID(recordName: "SE_x", zoneID: zone),
                         fields: ["payload": .string("v=0"), "n": .list([.int64(1), .double(2)]),
                                  "b": .bytes([1, 2]),
                                  "r": .reference(Reference(RecordID(recordName: "y", zoneID: zone))),
                                  "v": .list([.reference(Reference(RecordID(recordName: "z", zoneID: zone),
                                                                   action: .validate))]),
                                  "at": .location(Location(latitude: -33.9, longitude: 151.2, horizontalAccuracy: 4,
                                                           course: 270, timestamp: 12)),
                                  "f": .asset(Asset(spelling: .asset, fileChecksum: "c", size: 50, wrappingKey: "k",
                                                    downloadURL: "https://example.invalid/f")),
                                  "e": .emptyList(elementType: "LOCATION")],
                         recordChangeTag: "1f", created: RecordStamp(timestamp: 1, userRecordName: "alice"),
                         modified: RecordStamp(timestamp: 2, userRecordName: "bob", deviceID: "phone"),
                         parent: "root", share: "s1")
        MutationCodec.encode([.createZone(zone, incarnation: 3, atMs: 9), .putRecord(rec),
                              .putShare(ZoneShare(zoneID: zone, participants: ["bob": .init(userRecordName: "bob", permission: .readWrite)], changeTag: "2")),
                              .putSubscription(user: "alice", scope: .shared, Subscription(subscriptionID: "s", kind: .database)),
                              .deleteRecord(rec.id, recordType: "SignalEnvelope", atMs: 5),
                              .deleteRecord(rec.id, recordType: "Note", atMs: 6, sharedRoots: ["root", "s1"])],
                             into: &w)
        return w.bytes
    }

    @Test("mutations round-trip, every field type and record part of record format 2 included")
    func roundTrip() throws {
        let bytes = sampleEntry()
        var r = ByteReader(bytes)
        let decoded = try MutationCodec.decodeMutations(&r)
        var w = ByteWriter()
        MutationCodec.encode(decoded, into: &w)
        #expect(w.bytes == bytes)
        #expect(r.isAtEnd)
        guard case .putRecord(let record) = decoded[1] else {
            Issue.record("no record: \(decoded[1])")
            return
        }
        #expect(record.parent == "root" && record.share == "s1" && record.modified?.deviceID == "phone")
        #expect(record.fields["at"]?.locationValue?.course == 270 && record.fields["f"]?.assetValue?.spelling == .asset)
    }

    @Test("every prefix of an entry fails cleanly")
    func prefixes() {
        let bytes = sampleEntry()
        for cut in 0..<bytes.count {
            var r = ByteReader(Array(bytes[0..<cut]))
            #expect(throws: (any Error).self) { _ = try MutationCodec.decodeMutations(&r) }
        }
    }

    @Test("20,000 seeded mutations of an entry never crash the decoder or the journal scanner")
    func randomMutations() throws {
        var random = SeededRandom(seed: 42)
        let base = sampleEntry()
        var framed = JournalFormat.header(generation: 0)
        JournalFormat.frame(base, into: &framed)
        for _ in 0..<20_000 {
            var bytes = base
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let i = Int(random.next() % UInt64(bytes.count))
                bytes[i] = UInt8(truncatingIfNeeded: random.next())
            }
            var r = ByteReader(bytes)
            _ = try? MutationCodec.decodeMutations(&r)
            var f = framed
            let j = Int(random.next() % UInt64(f.count))
            f[j] = UInt8(truncatingIfNeeded: random.next())
            if let scan = try? JournalFormat.scan(f) { #expect(scan.validLength <= f.count) }
        }
    }

    @Test("tokens: a mangled token is not mistaken for a valid one")
    func tokenTampering() {
        let token = ChangeToken(.init(kind: .zone, owner: 7, incarnation: 1, sequence: 99, issuedAtMs: 1234))
        #expect(token.payload?.sequence == 99)
        var chars = Array(token.rawValue)
        for i in chars.indices {
            let saved = chars[i]
            chars[i] = saved == "A" ? "B" : "A"
            #expect(ChangeToken(rawValue: String(chars)).payload == nil || String(chars) == token.rawValue)
            chars[i] = saved
        }
    }
}
