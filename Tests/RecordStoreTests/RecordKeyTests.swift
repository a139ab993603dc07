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
