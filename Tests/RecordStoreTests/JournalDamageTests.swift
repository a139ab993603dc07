import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// Issue 13, item 3: damage followed by intact entries is refused with its offset and never
/// truncated; `StoreRepair` keeps a copy and salvages every intact entry.
@Suite("Journal damage and repair")
struct JournalDamageTests {
    let room = ZoneID(zoneName: "room_d")

    private func tempDir() -> String {
        let path = NSTemporaryDirectory() + "zonertc-damage-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func open(_ dir: String) throws -> EmbeddedStore {
        var options = EmbeddedStore.Options(directory: dir)
        options.fsync = .none
        options.automaticPush = false
        return try EmbeddedStore(options: options)
    }

    /// A journal of the zone's creation then one entry per record r0…r(n-1); the entries' offsets.
    private func journal(records n: Int) async throws -> (dir: String, bytes: [UInt8], offsets: [Int]) {
        let dir = tempDir()
        let store = try open(dir)
        let alice = store.client(user: "alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        for i in 0..<n {
            try await alice.save([Record(recordType: "Note", id: RecordID(recordName: "r\(i)", zoneID: room),
                                         fields: ["v": .string(String(repeating: "v", count: 40 + i % 13))])])
        }
        store.close()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dir)/journal-0.log")))
        let scan = try JournalFormat.scan(bytes)
        #expect(scan.entries.count == n + 1 && scan.damage == nil)
        var offsets: [Int] = []
        var offset = JournalFormat.headerSize
        for e in scan.entries {
            offsets.append(offset)
            offset += JournalFormat.entryHeaderSize + e.count
        }
        return (dir, bytes, offsets)
    }

    private func names(_ store: EmbeddedStore) async throws -> Set<String> {
        let all = try await store.client(user: "alice").fetchAllZoneChanges(room, since: nil, scope: .private)
        return Set(all.changed.map(\.id.recordName))
    }

    private func write(_ bytes: [UInt8], _ dir: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/journal-0.log"))
    }

    private func contents(_ dir: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dir)/journal-0.log")))
    }

    /// Records whose entries do not overlap the damaged bytes `range`.
    private func intact(_ offsets: [Int], _ total: Int, outside range: Range<Int>) -> Set<String> {
        var kept: Set<String> = []
        for i in 1..<offsets.count {
            let end = i + 1 < offsets.count ? offsets[i + 1] : total
            if !(offsets[i]..<end).overlaps(range) { kept.insert("r\(i - 1)") }
        }
        return kept
    }

    @Test("one flipped bit in the middle: open refuses with the offset and leaves the file as it was")
    func flippedBitRefused() async throws {
        let (dir, original, offsets) = try await journal(records: 20)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var damaged = original
        let victim = offsets[10]
        damaged[victim + JournalFormat.entryHeaderSize + 5] ^= 0x08
        try write(damaged, dir)
        let expected = JournalFormat.Damage(offset: victim, nextIntactEntry: offsets[11])
        #expect(try JournalFormat.scan(damaged).damage == expected)
        let error = #expect(throws: EmbeddedStore.OpenError.self) { _ = try open(dir) }
        #expect(error?.description.contains("offset \(victim)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try contents(dir) == damaged)
    }

    @Test("4 KB of zeros in the middle: refused, file unchanged; repair brings back every intact entry")
    func zerosRefusedThenRepaired() async throws {
        let (dir, original, offsets) = try await journal(records: 200)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(original.count > 3 * 4096)
        var damaged = original
        let start = original.count / 2
        let range = start..<(start + 4096)
        for i in range { damaged[i] = 0 }
        try write(damaged, dir)
        let error = #expect(throws: EmbeddedStore.OpenError.self) { _ = try open(dir) }
        let firstHit = offsets.last { $0 <= start }!
        #expect(error?.description.contains("offset \(firstHit)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try contents(dir) == damaged)

        let report = try StoreRepair.run(directory: dir)
        let expected = intact(offsets, original.count, outside: range)
        #expect(expected.count < 200 && expected.count > 100)
        #expect(report.entriesKept == expected.count + 1)
        #expect(report.dropped.count == 1)
        let dropped = report.dropped[0]
        let resumed = offsets.first { $0 >= range.upperBound }!
        #expect(dropped.offset == firstHit && dropped.bytes == resumed - firstHit && !dropped.isTail)
        #expect(dropped.estimatedEntries >= 1)
        // The original is kept byte for byte.
        let copy = try #require(report.originalCopy)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy))) == damaged)
        let store = try open(dir)
        #expect(try await names(store) == expected)
        // Writes go on after the repair and survive a reopen.
        try await store.client(user: "alice").save([Record(recordType: "Note",
                                                           id: RecordID(recordName: "after", zoneID: room))])
        store.close()
        let again = try open(dir)
        #expect(try await names(again) == expected.union(["after"]))
        again.close()
        #expect(try StoreRepair.run(directory: dir).changed == false)
    }

    @Test("damage in two places and a torn tail: every intact entry is salvaged, each stretch reported")
    func salvageSeveralStretches() async throws {
        let (dir, original, offsets) = try await journal(records: 30)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var damaged = original
        damaged[offsets[5] + 2] ^= 0xFF      // a length field
        damaged[offsets[20] + 12] ^= 0x01    // a payload byte
        damaged += [0, 0, 0, 9, 1, 2]        // an append cut short
        let salvage = try JournalSalvage(damaged)
        #expect(salvage.entries.count == 31 - 2)
        #expect(salvage.dropped == [
            JournalSalvage.Dropped(offset: offsets[5], bytes: offsets[6] - offsets[5], estimatedEntries: 1,
                                   isTail: false),
            JournalSalvage.Dropped(offset: offsets[20], bytes: offsets[21] - offsets[20], estimatedEntries: 1,
                                   isTail: false),
            JournalSalvage.Dropped(offset: original.count, bytes: 6, estimatedEntries: 1, isTail: true),
        ])
        // The rewritten journal scans clean and holds the same payloads.
        let rescan = try JournalFormat.scan(salvage.repairedJournal)
        #expect(rescan.damage == nil && rescan.tornBytes == 0)
        #expect(rescan.entries.map(Array.init) == salvage.entries.map(Array.init))
    }

    @Test("a torn tail alone is still dropped on open, with nothing refused")
    func tornTailStillRecovered() async throws {
        let (dir, original, _) = try await journal(records: 5)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try write(original + [0, 0, 1, 0, 7, 7, 7], dir)
        let store = try open(dir)
        #expect(store.recovered?.tornBytesDropped == 7)
        #expect(try await names(store) == ["r0", "r1", "r2", "r3", "r4"])
        store.close()
        #expect(try contents(dir) == original)
    }
}
