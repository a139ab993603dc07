import Testing
@testable import RecordStore

/// Copies of a record share one box until one of them is changed: each copy must still behave as
/// a value of its own, and compare, hash and print as a record holding its parts itself.
@Suite struct RecordStorageTests {
    private let zone = ZoneID(zoneName: "calls", ownerName: "alice")

    private func sample() -> Record {
        Record(recordType: "Signal", id: RecordID(recordName: "s1", zoneID: zone),
               fields: ["kind": .string("offer"), "seq": .int64(3)], recordChangeTag: "1f",
               created: RecordStamp(timestamp: 5, userRecordName: "alice"))
    }

    @Test func aChangedCopyLeavesTheOthersAlone() {
        let original = sample()
        var copy = original
        #expect(copy.storage === original.storage, "a copy shares the box")
        copy["kind"] = .string("answer")
        copy.recordChangeTag = "20"
        copy.id.recordName = "s2"
        copy.modified = RecordStamp(timestamp: 6, userRecordName: "bob")
        #expect(copy.storage !== original.storage)
        #expect(original["kind"] == .string("offer") && original.recordChangeTag == "1f")
        #expect(original.id.recordName == "s1" && original.modified == nil)
        #expect(copy["kind"] == .string("answer") && copy["seq"] == .int64(3) && copy.id.recordName == "s2")
        #expect(copy.created == original.created && copy.recordType == "Signal")
    }

    @Test func aRecordHeldAloneChangesInPlace() {
        var record = sample()
        // Its identity only: holding the box itself would share it.
        let box = ObjectIdentifier(record.storage)
        record.fields["extra"] = .double(1.5)
        record.recordType = "Other"
        #expect(ObjectIdentifier(record.storage) == box)
        #expect(record["extra"] == .double(1.5) && record.recordType == "Other")
    }

    @Test func comparesAndHashesByParts() {
        let a = sample()
        var b = sample()
        #expect(a.storage !== b.storage && a == b && a.hashValue == b.hashValue)
        b.recordChangeTag = "20"
        #expect(a != b)
        #expect(Set([a, sample(), b]).count == 2)
        // A NaN field is unequal to itself, shared box or not (as when records held their parts).
        let nan = Record(recordType: "T", id: RecordID(recordName: "n"), fields: ["x": .double(.nan)])
        let same = nan
        #expect(nan != same)
    }

    @Test func printsAsAStructOfItsParts() {
        let record = Record(recordType: "T", id: RecordID(recordName: "r", zoneID: zone), fields: ["a": .int64(1)],
                            recordChangeTag: "7")
        #expect("\(record)" == "Record(recordType: \"T\", id: r in calls@alice, fields: [\"a\": int64(1)], "
                + "recordChangeTag: Optional(\"7\"), created: nil, modified: nil, parent: nil, share: nil, "
                + "shortGUID: nil)")
        #expect(Mirror(reflecting: record).children.map(\.label) == ["recordType", "id", "fields", "recordChangeTag",
                                                                    "created", "modified", "parent", "share",
                                                                    "shortGUID"])
    }
}
