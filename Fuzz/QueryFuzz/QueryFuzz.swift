// libFuzzer entry point for records/query: arbitrary bytes parsed as a request body, its query read
// as the daemon reads it (Query, Filter and Sort Descriptor dictionaries), checked, and evaluated and
// sorted over a handful of records of every field type; its continuationMarker decoded. A trap here
// is a bug: a hostile query must only ever be refused with a thrown error (400 BAD_REQUEST).
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
import Foundation
@testable import RecordStore
@testable import StoreServer
import ZoneCore

private let zone = ZoneID(zoneName: "zone_fuzz", ownerName: "fuzzer")

/// Records whose fields cover every type a filter may meet, under names queries tend to use.
private let records: [Record] = {
    let here = Location(latitude: 48.85, longitude: 2.35)
    let values: [FieldValue] = [
        .string("Blue in Green"), .int64(Int64.max), .int64(-1), .double(2.5), .double(-0.0), .timestamp(0),
        .bytes([0, 255]), .reference(Reference(RecordID(recordName: "r", zoneID: zone))),
        .location(here), .list([.string("cool"), .string("modal")]), .list([.int64(1), .int64(2)]),
        .emptyList(elementType: "STRING"),
    ]
    var out: [Record] = []
    for (i, v) in values.enumerated() {
        var fields: RecordFields = [:]
        for name in ["n", "genre", "title", "tags", "at", "v"] {
            fields[name] = values[(i + name.count) % values.count]
        }
        fields["own"] = v
        out.append(Record(recordType: "Song", id: RecordID(recordName: "r\(i)", zoneID: zone), fields: fields))
    }
    return out
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func queryFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    guard let body = try? WireFormat.parseObject(bytes) else { return 0 }
    let request = WireObject(body)
    if let q = try? request.object("query"), let query = try? StoreAPI.decodeQuery(q, zone: zone),
       (try? query.validate()) != nil {
        let evaluator = QueryEvaluator(query)
        let matched = records.filter(evaluator.matches).sorted(by: evaluator.precedes)
        // The order is a strict weak order: no record precedes itself.
        precondition(!matched.contains { evaluator.precedes($0, $0) }, "a record sorts before itself")
        let digest = QueryCursor.digest(of: query, zones: [zone], scope: .private, user: "fuzzer")
        if let marker = body["continuationMarker"] as? String,
           let cursor = try? QueryCursor.decode(marker, digest: digest) {
            let start = cursor.resume(in: matched)
            precondition(start >= 0 && start <= matched.count, "a marker resumes outside the answer")
        }
    }
    return 0
}
