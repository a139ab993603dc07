import Testing
import ZoneCore
@testable import RecordStore

/// A record's fields behave as the dictionary they replaced: equal and hashed whatever the order
/// they were set in, a name given twice keeps its last value, nil removes; the journal's bytes do
/// not depend on the order; large (hostile) sets take the indexed paths with the same results.
@Suite struct RecordFieldsTests {
    @Test func readsSetsAndRemovesByName() {
        var fields: RecordFields = ["a": .int64(1), "b": .string("x")]
        #expect(fields["a"] == .int64(1) && fields["b"] == .string("x") && fields["c"] == nil)
        fields["a"] = .int64(2)
        fields["c"] = .double(0.5)
        #expect(fields.count == 3 && fields["a"] == .int64(2))
        #expect(fields.keys == ["a", "b", "c"], "a name keeps the place it was first set at")
        fields["b"] = nil
        fields["missing"] = nil
        #expect(fields.keys == ["a", "c"] && fields["b"] == nil)
        let twice = RecordFields([("k", .int64(1)), ("k", .int64(2))])
        #expect(twice.count == 1 && twice["k"] == .int64(2), "the last value of a repeated name")
    }

    @Test func aLiteralsPairsIterateLabelledInOrderAndCountTheirBytes() {
        let literal: RecordFields = ["kind": .string("offer"), "seq": .int64(3), "ids": .list([.string("ab")])]
        var names: [String] = []
        for field in literal { names.append(field.key); #expect(literal[field.key] == field.value) }
        #expect(names == ["kind", "seq", "ids"])
        #expect(literal.map(\.value) == [.string("offer"), .int64(3), .list([.string("ab")])])
        let record = Record(recordType: "T", id: RecordID(recordName: "r"), fields: literal)
        #expect(record.fieldDataSize == 4 + 5 + 3 + 8 + 3 + 2)
        // The literal's pairs are kept as they are: changing a copy leaves the literal's alone.
        var changed = literal
        changed["seq"] = .int64(4)
        changed["new"] = .int64(0)
        #expect(literal["seq"] == .int64(3) && literal.count == 3)
        #expect(changed["seq"] == .int64(4) && changed.count == 4)
    }

    @Test func equalityAndHashIgnoreOrder() {
        let one: RecordFields = ["a": .int64(1), "b": .string("x"), "c": .list([.int64(1)])]
        let other: RecordFields = ["c": .list([.int64(1)]), "a": .int64(1), "b": .string("x")]
        #expect(one == other && one.hashValue == other.hashValue)
        #expect(Set([one, other]).count == 1)
        #expect(one != ["a": .int64(1), "b": .string("y"), "c": .list([.int64(1)])])
        #expect(one != ["a": .int64(1), "b": .string("x")])
        #expect(one != ["a": .int64(1), "b": .string("x"), "d": .list([.int64(1)])])
        #expect(RecordFields(["b": .string("x"), "a": .int64(1)] as [String: FieldValue])
                == ["a": .int64(1), "b": .string("x")])
    }

    @Test func mergingLetsTheNewValuesWin() {
        let existing: RecordFields = ["a": .int64(1), "b": .int64(2)]
        let merged = existing.merging(["b": .int64(20), "c": .int64(3)])
        #expect(merged == ["a": .int64(1), "b": .int64(20), "c": .int64(3)])
        #expect(merged.holds(["a": .int64(1), "c": .int64(3)]) && !merged.holds(["b": .int64(2)]))
        #expect(merged.holds([:]))
    }

    /// Past the index threshold, building, merging, equality and filters give what the small
    /// paths give; and a set of many thousand fields is handled in time linear in its size.
    @Test func largeSetsTakeTheIndexedPathsWithTheSameResults() {
        var random = SeededRandom(seed: 12)
        let n = 20_000
        let names = (0..<n).map { "f\($0)" }
        var pairs = names.map { ($0, FieldValue.int64(Int64(truncatingIfNeeded: random.next()))) }
        pairs.append(("f7", .string("last")))
        let big = RecordFields(pairs)
        #expect(big.count == n && big["f7"] == .string("last") && big["f19999"] != nil)
        let reversed = RecordFields(big.reversed().map { ($0.key, $0.value) })
        #expect(big == reversed && big.hashValue == reversed.hashValue)
        var changed = reversed
        changed["f3"] = .string("other")
        #expect(big != changed)
        let merged = big.merging(RecordFields(names.map { ($0, FieldValue.int64(0)) } + [("new", .int64(1))]))
        #expect(merged.count == n + 1 && merged["f7"] == .int64(0) && merged.keys.first == "f0")
        var filters: [String: FieldValue] = [:]
        for name in names.prefix(100) { filters[name] = big[name] }
        #expect(big.holds(filters))
        filters["f7"] = .int64(0)
        #expect(!big.holds(filters))
    }

    /// The journal writes names sorted: the same record set in two orders has the same bytes,
    /// and reads back equal.
    @Test func journalBytesDoNotDependOnTheOrder() throws {
        let id = RecordID(recordName: "r1", zoneID: ZoneID(zoneName: "room_a", ownerName: "alice"))
        let a = Record(recordType: "Note", id: id, fields: ["z": .int64(1), "a": .string("x"), "m": .bytes([1, 2])],
                       recordChangeTag: "9")
        var b = Record(recordType: "Note", id: id, recordChangeTag: "9")
        b["m"] = .bytes([1, 2])
        b["a"] = .string("x")
        b["z"] = .int64(1)
        var wa = ByteWriter(capacity: 64), wb = ByteWriter(capacity: 64)
        MutationCodec.encode(a, format: MutationCodec.recordFormat, into: &wa)
        MutationCodec.encode(b, format: MutationCodec.recordFormat, into: &wb)
        #expect(wa.bytes == wb.bytes)
        var r = ByteReader(wa.bytes)
        let back = try MutationCodec.decodeRecord(&r, format: MutationCodec.recordFormat)
        #expect(back == a && back.fields.keys == ["a", "m", "z"])
    }
}
