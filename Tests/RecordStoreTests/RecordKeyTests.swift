import Testing
@testable import RecordStore

/// A record key hashes its name once, when made: it must behave as the name it stands for —
/// equal and hashed alike exactly when the names are equal, however the name was built.
@Suite struct RecordKeyTests {
    @Test func equalNamesMakeEqualKeys() {
        let name = "SE_0123456789abcdef0123456789abcdef_1700000000000_offer"
        let built = ["SE_", "0123456789abcdef0123456789abcdef", "_", "1700000000000", "_", "offer"].joined()
        #expect(RecordKey(name) == RecordKey(built) && RecordKey(name).hashValue == RecordKey(built).hashValue)
        #expect(RecordKey("é") == RecordKey("e\u{301}"), "as the names compare: canonically equivalent")
        var records: [RecordKey: Int] = [RecordKey(name): 1]
        records[RecordKey(built), default: 0] += 1
        #expect(records == [RecordKey(name): 2] && records.keys.first?.name == name)
    }

    @Test func differentNamesMakeDifferentKeys() {
        let names = ["a", "b", "ab", "ba", "", "A", "a "] + (0..<200).map { "n\($0)" }
        #expect(Set(names.map(RecordKey.init)).count == names.count)
        #expect(RecordKey("x") != RecordKey("y"))
    }
}

/// Saves and deletes apply with the key their planning made; replay makes it from the record's
/// name. Both must leave the same zone.
@Suite struct PlannedRecordKeyTests {
    @Test func liveChangesLeaveWhatReplayLeaves() throws {
        var live = try EngineFixture.roomWithListener()
        let ctx = EngineFixture.author
        let room = EngineFixture.room
        func note(_ name: String, _ n: Int64) -> Record {
            Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room), fields: ["n": .int64(n)])
        }
        _ = try live.modifyRecords(ModifyRecordsRequest(saves: [note("a", 1), note("b", 2), note("c", 3)]),
                                   scope: .private, ctx)
        _ = try live.modifyRecords(ModifyRecordsRequest(saves: [note("a", 4)], deletes: [note("b", 0).id], savePolicy: .allKeys),
                                   scope: .private, ctx)
        _ = try live.modifyRecords(ModifyRecordsRequest(saves: [note("b", 5)], deletes: [note("c", 0).id], savePolicy: .allKeys),
                                   scope: .private, ctx)
        var replayed = StoreState()
        for m in live.drainMutations() { replayed.apply(m) }
        let a = try #require(live.state.zones[room]), b = try #require(replayed.zones[room])
        #expect(a.records == b.records && a.tombstones == b.tombstones && a.log.latest == b.log.latest)
        #expect(a.sequence == b.sequence && a.records.keys.map(\.name).sorted() == ["a", "b"])
        #expect(a.tombstones.keys.map(\.name) == ["c"])
    }
}
