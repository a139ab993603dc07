// CloudKit Web Services Reference, "Fetching Records Using a Query (records/query)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/QueryingRecords.html):
// what this store serves of it (EQUALS filters in one zone, desiredKeys, numbersAsStrings), and the
// documented keys it refuses by name until queries are served in full.
import Foundation
import Testing

@Suite("CloudKit: Fetching Records Using a Query (records/query)")
struct QueryRecordsTests {
    private func setUp(_ backend: ConformanceBackend) async throws -> (ConformanceUser, [String: Any]) {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([
            operation("create", recordDictionary("a", type: "Song", fields: ["genre": value("jazz"), "n": value(1)])),
            operation("create", recordDictionary("b", type: "Song", fields: ["genre": value("rock"), "n": value(2)])),
            operation("create", recordDictionary("c", type: "Song", fields: ["genre": value("jazz"), "n": value(3)])),
        ], zoneID: zone)
        return (user, zone)
    }

    private func query(_ filters: [[String: Any]] = [], more: [String: Any] = [:]) -> [String: Any] {
        var q: [String: Any] = ["recordType": "Song"]
        if !filters.isEmpty { q["filterBy"] = filters }
        return q.merging(more) { $1 }
    }

    @Test("EQUALS filters, with desiredKeys and numbersAsStrings", arguments: ConformanceBackend.allCases)
    func equals(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.post("records/query", [
            "zoneID": zone, "desiredKeys": ["n"], "numbersAsStrings": true,
            "query": query([["comparator": "EQUALS", "fieldName": "genre", "fieldValue": value("jazz")]]),
        ])
        #expect(reply.status == 200)
        #expect(reply.records.map { $0["recordName"] as? String } == ["a", "c"])
        #expect(reply.records.map(\.fieldNames) == [["n"], ["n"]])
        #expect(reply.records.map { $0.field("n") as? String } == ["1", "3"])
    }

    @Test("zoneWide is ignored when zoneID is given; without one it is refused until served",
          arguments: ConformanceBackend.allCases)
    func zoneWide(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let ignored = try await user.post("records/query", ["zoneID": zone, "zoneWide": true, "query": query()])
        #expect(ignored.status == 200 && ignored.records.count == 3)
        let refused = try await user.post("records/query", ["zoneWide": true, "query": query()])
        #expect(refused.status == 400 && refused.code == "BAD_REQUEST" && refused.reason.contains("zoneWide"))
    }

    @Test("documented keys not served yet are BAD_REQUEST naming them (paging, sorting, comparators, system fields)",
          arguments: ConformanceBackend.allCases)
    func notYetServed(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let cases: [(String, [String: Any])] = [
            ("resultsLimit", ["zoneID": zone, "resultsLimit": 1, "query": query()]),
            ("continuationMarker", ["zoneID": zone, "continuationMarker": "x", "query": query()]),
            ("sortBy", ["zoneID": zone, "query": query(more: ["sortBy": [["fieldName": "n"]]])]),
            ("LESS_THAN", ["zoneID": zone, "query": query([["comparator": "LESS_THAN", "fieldName": "n",
                                                           "fieldValue": value(2)]])]),
            ("systemFieldName", ["zoneID": zone, "query": query([
                ["comparator": "EQUALS", "systemFieldName": "recordName", "fieldValue": value("a")]])]),
            ("bogus", ["zoneID": zone, "bogus": 1, "query": query()]),
        ]
        for (key, body) in cases {
            let reply = try await user.post("records/query", body)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(key): \(reply)")
            #expect(reply.reason.contains(key), "\(key): \(reply)")
        }
    }
}
