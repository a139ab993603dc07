// How records/query compares values where the reference is silent (docs/CLOUDKIT.md, records/query):
// numbers as numbers without rounding, references without owner or action, strict weak ordering.
@testable import RecordStore
import Testing

@Suite("Query evaluation")
struct QueryEvaluatorTests {
    @Test("an INT64 and a DOUBLE compare exactly, even where the integer has no double")
    func numbers() {
        #expect(QueryEvaluator.order(.int64(.max), .double(9_223_372_036_854_775_808.0)) == -1)
        #expect(QueryEvaluator.order(.double(-9_223_372_036_854_775_808.0), .int64(.min)) == 0)
        #expect(QueryEvaluator.order(.int64(9_007_199_254_740_993), .double(9_007_199_254_740_992.0)) == 1)
        #expect(QueryEvaluator.order(.double(2.5), .int64(2)) == 1)
        #expect(QueryEvaluator.order(.double(-2.5), .int64(-2)) == -1)
        #expect(QueryEvaluator.order(.timestamp(1), .int64(1)) == nil)
        #expect(QueryEvaluator.canonical(.double(2)) == QueryEvaluator.canonical(.int64(2)))
    }

    @Test("a reference matches whatever its action and however its owner is spelt")
    func references() {
        let zone = ZoneID(zoneName: "z", ownerName: "alice")
        let stored = FieldValue.reference(Reference(RecordID(recordName: "r", zoneID: zone), action: .deleteSelf))
        let asked = FieldValue.reference(Reference(RecordID(recordName: "r", zoneID: ZoneID(zoneName: "z"))))
        let query = RecordQuery(recordType: "T", filters: [QueryFilter(.equals, "ref", asked)])
        let record = Record(recordType: "T", id: RecordID(recordName: "x", zoneID: zone), fields: ["ref": stored])
        #expect(QueryEvaluator(query).matches(record))
    }

    @Test("sorting is a strict weak order across types, missing fields last in both directions")
    func order() {
        let values: [FieldValue?] = [nil, .int64(3), .double(2.5), .timestamp(1), .string("a"), .bytes([1]),
                                     .list([.string("x")]), .emptyList(elementType: "STRING")]
        let zone = ZoneID(zoneName: "z", ownerName: "u")
        let records = values.enumerated().map { i, v in
            var fields: RecordFields = [:]
            fields["f"] = v
            return Record(recordType: "T", id: RecordID(recordName: "r\(i)", zoneID: zone), fields: fields)
        }
        for ascending in [true, false] {
            let e = QueryEvaluator(RecordQuery(recordType: "T", sort: [QuerySort("f", ascending: ascending)]))
            for a in records {
                #expect(!e.precedes(a, a))
                for b in records where e.precedes(a, b) { #expect(!e.precedes(b, a)) }
            }
            #expect(records.sorted(by: e.precedes).last?.id.recordName == "r0")
        }
    }
}
