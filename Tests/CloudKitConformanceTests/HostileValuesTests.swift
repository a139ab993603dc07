// Bad input against every documented shape (the Record Dictionary, the Record Field Dictionary and
// its values, the request keys): each is BAD_REQUEST naming what is wrong, never a crash; in an
// atomic request nothing is half-applied, and what was stored before is all still there.
import Foundation
import Testing

@Suite("CloudKit: hostile values")
struct HostileValuesTests {
    /// Field dictionaries (of a field `n`) that must each have their request refused whole with
    /// BAD_REQUEST, the reason naming `mention`.
    static let refusedFields: [(field: String, mention: String)] = [
        (#"{"value":18446744073709551616,"type":"INT64"}"#, "n"),
        (#"{"value":1e400,"type":"DOUBLE"}"#, "range"),
        (#"{"value":NaN}"#, "JSON"),
        (#"{"value":[[1,2]],"type":"INT64_LIST"}"#, "n"),
        (#"{"value":[1,"a"],"type":"INT64_LIST"}"#, "n"),
        (#"{"value":[[1]]}"#, "nest"),
        (#"{"value":[{"value":1,"type":"INT64"}],"type":"LIST"}"#, "LIST"),
        (#"{"value":1,"type":"FLOAT"}"#, "FLOAT"),
        (#"{"value":[]}"#, "type"),
        (#"{"value":"1","type":"BYTES"}"#, "base64"),
        (#"{"value":{"latitude":"north","longitude":1},"type":"LOCATION"}"#, "latitude"),
        (#"{"value":{"recordName":7},"type":"REFERENCE"}"#, "recordName"),
        (#"{"value":{"fileChecksum":"c","size":1.5},"type":"ASSETID"}"#, "size"),
        (#"{"value":1,"type":"INT64","extra":1}"#, "extra"),
        ("1", "n"),
    ]

    /// Operations and whole bodies that must be refused the same way.
    static let refusedOperations: [(operation: String, mention: String)] = [
        (#"{"operationType":"create","record":{"recordName":"x","recordType":"T","fields":[1]}}"#, "fields"),
        (#"{"operationType":"create","record":{"recordName":5,"recordType":"T"}}"#, "recordName"),
        (#"{"operationType":"create","record":"x"}"#, "record"),
    ]
    static let refusedBodies: [(body: String, mention: String)] = [
        (#"{"operations":{"operationType":"create"}}"#, "operations"),
        (#"{"operations":[],"atomic":"yes"}"#, "atomic"),
        (#"{"operations":[],"desiredKeys":"a"}"#, "desiredKeys"),
        (#"{"operations":[],"desiredKeys":[1]}"#, "desiredKeys"),
        (#"{"operations":[],"zoneID":{"zoneName":7}}"#, "zoneName"),
        (#"[1,2,3]"#, "object"),
    ]

    /// Every refused request, each bad operation after a good one in the test's zone.
    static var refused: [(body: String, mention: String)] {
        let good = #"{"operationType":"create","record":{"recordName":"good","recordType":"T"}}"#
        func request(_ operation: String) -> String {
            #"{"zoneID":{"zoneName":"zone_c"},"operations":["# + good + "," + operation + "]}"
        }
        let fields = refusedFields.map { field, mention in
            (request(#"{"operationType":"create","record":{"recordName":"x","recordType":"T","fields":{"n":"#
                     + field + "}}}"), mention)
        }
        return fields + refusedOperations.map { (request($0.operation), $0.mention) } + refusedBodies
    }

    @Test("malformed dictionaries, values and keys: BAD_REQUEST naming them; nothing is applied",
          arguments: ConformanceBackend.allCases)
    func refusedWhole(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([operation("create", recordDictionary("kept", fields: ["v": value(1)]))],
                                  zoneID: zone)
        for (body, mention) in Self.refused {
            let reply = try await user.send("records/modify", Array(body.utf8))
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(body): \(reply)")
            #expect(reply.reason.contains(mention), "\(body): \(reply.reason)")
        }
        #expect(try await user.fetch("good", zoneID: zone) == nil)
        #expect(try await user.fetch("kept", zoneID: zone)?.int("v") == 1)
    }

    @Test("JSON nested past the reader's depth is BAD_REQUEST", arguments: ConformanceBackend.allCases)
    func deepNesting(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let reply = try await user.send("records/modify", Array(#"{"operations":\#(deep)}"#.utf8))
        #expect(reply.status == 400 && reply.code == "BAD_REQUEST")
    }

    @Test("an atomic request with one record the engine refuses applies none of it",
          arguments: ConformanceBackend.allCases)
    func atomicNothingHalfApplied(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let reply = try await user.modify([
            operation("create", recordDictionary("a", fields: ["v": value(1)])),
            operation("create", recordDictionary("b", fields: ["w": value(["latitude": 1.0, "longitude": 400.0])])),
            operation("create", recordDictionary("_hidden", fields: [:])),
            operation("create", recordDictionary("c", type: "bad type!", fields: [:])),
        ], zoneID: zone)
        #expect(reply.status == 200)
        #expect(reply.recordCodes == ["ATOMIC_ERROR", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST"])
        #expect(try await user.lookup(["a", "b"], zoneID: zone).recordCodes == ["NOT_FOUND", "NOT_FOUND"])
    }

    @Test("huge and odd numbers where numbers belong: refused or kept exactly, never wrapped",
          arguments: ConformanceBackend.allCases)
    func numbers(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let kept = try await user.modify([operation("create", recordDictionary("n", fields: [
            "max": value("9223372036854775807", "INT64"),
            "big": value(1e308, "DOUBLE"), "exp": value(1e3, "INT64"),
        ]))], zoneID: zone)
        let r = try #require(kept.records.first)
        #expect(r.int("max") == Int64.max && r.int("exp") == 1000)
        #expect((r.field("big") as? NSNumber)?.doubleValue == 1e308)
        for bad in [value("9223372036854775808", "INT64"), value(1.5, "INT64"), value("1e3", "TIMESTAMP"),
                    value("inf", "DOUBLE"), value("nan", "DOUBLE")] {
            let reply = try await user.modify([operation("create", recordDictionary("x", fields: ["f": bad]))],
                                              zoneID: zone)
            #expect(reply.status == 400 && reply.reason.contains("f"), "\(bad): \(reply)")
        }
    }
}
