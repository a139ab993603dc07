// CloudKit Web Services Reference, "Fetching Records Using a Query (records/query)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/QueryingRecords.html): the
// request keys, the Query, Filter and Sort Descriptor dictionaries, every comparator, paging with
// continuationMarker, zoneWide, the shared database, and the requests that must be refused.
import Foundation
import RecordStore
import Testing

@Suite("CloudKit: Fetching Records Using a Query (records/query)")
struct QueryRecordsTests {
    static var paris: [String: Any] { ["latitude": 48.8566, "longitude": 2.3522] }
    static var london: [String: Any] { ["latitude": 51.5074, "longitude": -0.1278] }
    static var berlin: [String: Any] { ["latitude": 52.52, "longitude": 13.405] }

    /// Four songs (and an album, which no Song query finds) in a zone of a new user.
    private func setUp(_ backend: ConformanceBackend) async throws -> (ConformanceUser, [String: Any]) {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let reply = try await user.modify([
            operation("create", recordDictionary("a", type: "Song", fields: [
                "genre": value("jazz"), "n": value(1), "title": value("Blue in Green"),
                "tags": value(["cool", "modal"], "STRING_LIST"), "at": value(Self.paris, "LOCATION")])),
            operation("create", recordDictionary("b", type: "Song", fields: [
                "genre": value("rock"), "n": value(2), "title": value("Black Dog"),
                "tags": value(["loud"], "STRING_LIST"), "at": value(Self.london, "LOCATION")])),
            operation("create", recordDictionary("c", type: "Song", fields: [
                "genre": value("jazz"), "n": value(3), "title": value("So What"),
                "tags": value(["modal", "cool", "classic"], "STRING_LIST"), "at": value(Self.berlin, "LOCATION")])),
            operation("create", recordDictionary("d", type: "Song", fields: [
                "genre": value("pop"), "n": value(4), "title": value("Blüe Monday")])),
            operation("create", recordDictionary("e", type: "Album", fields: ["genre": value("jazz"), "n": value(1)])),
        ], zoneID: zone)
        #expect(reply.status == 200 && reply.recordCodes.allSatisfy { $0 == nil }, "\(reply)")
        return (user, zone)
    }

    private func query(_ filters: [[String: Any]] = [], sort: [[String: Any]]? = nil,
                       type: String = "Song") -> [String: Any] {
        var q: [String: Any] = ["recordType": type]
        if !filters.isEmpty { q["filterBy"] = filters }
        if let sort { q["sortBy"] = sort }
        return q
    }

    private func filter(_ comparator: String, _ field: String, _ v: [String: Any],
                        distance: Double? = nil) -> [String: Any] {
        var f: [String: Any] = ["comparator": comparator, "fieldName": field, "fieldValue": v]
        if let distance { f["distance"] = distance }
        return f
    }

    private func names(_ reply: Reply) -> [String] { reply.records.compactMap { $0["recordName"] as? String } }

    @Test("every comparator of the Filter dictionary finds the records it names",
          arguments: ConformanceBackend.allCases)
    func comparators(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let cases: [(String, [String: Any], [String])] = [
            ("EQUALS", filter("EQUALS", "genre", value("jazz")), ["a", "c"]),
            ("NOT_EQUALS", filter("NOT_EQUALS", "genre", value("jazz")), ["b", "d"]),
            ("LESS_THAN", filter("LESS_THAN", "n", value(2)), ["a"]),
            ("LESS_THAN_OR_EQUALS", filter("LESS_THAN_OR_EQUALS", "n", value(2)), ["a", "b"]),
            // A DOUBLE against INT64 fields: numbers compare as numbers.
            ("GREATER_THAN", filter("GREATER_THAN", "n", value(2.5)), ["c", "d"]),
            ("GREATER_THAN_OR_EQUALS", filter("GREATER_THAN_OR_EQUALS", "n", value(3)), ["c", "d"]),
            // London is 344 km from Paris, Berlin 878 km.
            ("NEAR", filter("NEAR", "at", value(Self.paris, "LOCATION"), distance: 400_000), ["a", "b"]),
            ("CONTAINS_ALL_TOKENS", filter("CONTAINS_ALL_TOKENS", "title", value("green BLUE")), ["a"]),
            // "Blüe" is the token "blue" without its diacritic.
            ("CONTAINS_ANY_TOKENS", filter("CONTAINS_ANY_TOKENS", "title", value("dog, blue")), ["a", "b", "d"]),
            ("IN", filter("IN", "genre", value(["jazz", "pop"], "STRING_LIST")), ["a", "c", "d"]),
            ("NOT_IN", filter("NOT_IN", "genre", value(["jazz"], "STRING_LIST")), ["b", "d"]),
            ("LIST_CONTAINS", filter("LIST_CONTAINS", "tags", value("modal")), ["a", "c"]),
            // d has no tags: a missing field matches no filter, negated ones included.
            ("NOT_LIST_CONTAINS", filter("NOT_LIST_CONTAINS", "tags", value("modal")), ["b"]),
            ("LIST_CONTAINS_ANY", filter("LIST_CONTAINS_ANY", "tags", value(["loud", "classic"], "STRING_LIST")),
             ["b", "c"]),
            ("NOT_LIST_CONTAINS_ANY", filter("NOT_LIST_CONTAINS_ANY", "tags",
                                             value(["loud", "classic"], "STRING_LIST")), ["a"]),
            ("LIST_CONTAINS_ALL", filter("LIST_CONTAINS_ALL", "tags", value(["cool", "modal"], "STRING_LIST")),
             ["a", "c"]),
            ("NOT_LIST_CONTAINS_ALL", filter("NOT_LIST_CONTAINS_ALL", "tags",
                                             value(["cool", "modal"], "STRING_LIST")), ["b"]),
            ("BEGINS_WITH", filter("BEGINS_WITH", "title", value("Bl")), ["a", "b", "d"]),
            ("NOT_BEGINS_WITH", filter("NOT_BEGINS_WITH", "title", value("Bl")), ["c"]),
            ("LIST_MEMBER_BEGINS_WITH", filter("LIST_MEMBER_BEGINS_WITH", "tags", value("cl")), ["c"]),
            ("NOT_LIST_MEMBER_BEGINS_WITH", filter("NOT_LIST_MEMBER_BEGINS_WITH", "tags", value("cl")), ["a", "b"]),
        ]
        #expect(Set(cases.map(\.0)) == Set(QueryComparator.allCases.map(\.rawValue)))
        for (comparator, f, expected) in cases {
            let reply = try await user.post("records/query", ["zoneID": zone, "query": query([f])])
            #expect(reply.status == 200, "\(comparator): \(reply)")
            #expect(names(reply) == expected, "\(comparator): \(reply)")
        }
    }

    @Test("filters are ANDed; desiredKeys and numbersAsStrings shape the records",
          arguments: ConformanceBackend.allCases)
    func severalFilters(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.post("records/query", [
            "zoneID": zone, "desiredKeys": ["n"], "numbersAsStrings": true,
            "query": query([filter("EQUALS", "genre", value("jazz")), filter("GREATER_THAN", "n", value(1))]),
        ])
        #expect(reply.status == 200)
        #expect(names(reply) == ["c"])
        #expect(reply.records.map(\.fieldNames) == [["n"]])
        #expect(reply.records.first?.field("n") as? String == "3")
        #expect(reply.body["continuationMarker"] == nil)
    }

    @Test("sortBy orders by any field, in either direction, by several fields, and by distance",
          arguments: ConformanceBackend.allCases)
    func sortBy(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let cases: [([[String: Any]], [String])] = [
            ([["fieldName": "n", "ascending": false]], ["d", "c", "b", "a"]),
            ([["fieldName": "title"]], ["b", "a", "d", "c"]),
            ([["fieldName": "genre"], ["fieldName": "n", "ascending": false]], ["c", "a", "d", "b"]),
            // From Berlin: itself, Paris (878 km), London (930 km); d has no location and comes last.
            ([["fieldName": "at", "relativeLocation": value(Self.berlin, "LOCATION")]], ["c", "a", "b", "d"]),
        ]
        for (sort, expected) in cases {
            let reply = try await user.post("records/query", ["zoneID": zone, "query": query(sort: sort)])
            #expect(reply.status == 200 && names(reply) == expected, "\(sort): \(reply)")
        }
    }

    @Test("resultsLimit pages and continuationMarker resumes after the last record, even when records move",
          arguments: ConformanceBackend.allCases)
    func paging(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let q = query(sort: [["fieldName": "n"]])
        let first = try await user.post("records/query", ["zoneID": zone, "resultsLimit": 2, "query": q])
        #expect(first.status == 200 && names(first) == ["a", "b"])
        let marker = try #require(first.body["continuationMarker"] as? String)
        // A record sorting before the marker, written between two pages, neither repeats nor hides one.
        _ = try await user.modify([operation("create", recordDictionary("a0", type: "Song", fields: ["n": value(0)]))],
                                  zoneID: zone)
        let second = try await user.post("records/query", ["zoneID": zone, "resultsLimit": 1,
                                                           "continuationMarker": marker, "query": q])
        #expect(second.status == 200 && names(second) == ["c"], "\(second)")
        let marker2 = try #require(second.body["continuationMarker"] as? String)
        let last = try await user.post("records/query", ["zoneID": zone, "continuationMarker": marker2, "query": q])
        #expect(last.status == 200 && names(last) == ["d"])
        #expect(last.body["continuationMarker"] == nil)
    }

    @Test("a forged, truncated or foreign continuationMarker is BAD_REQUEST", arguments: ConformanceBackend.allCases)
    func forgedMarker(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let q = query(sort: [["fieldName": "n"]])
        let first = try await user.post("records/query", ["zoneID": zone, "resultsLimit": 1, "query": q])
        let marker = try #require(first.body["continuationMarker"] as? String)
        let other = try await backend.user()
        _ = try await other.makeZone()
        let foreignQuery = query([filter("EQUALS", "genre", value("jazz"))], sort: [["fieldName": "n"]])
        var markers: [(String, Any, [String: Any], ConformanceUser)] = [
            ("garbage", "not a marker!", q, user), ("empty", "", q, user), ("number", 7, q, user),
            ("truncated", String(marker.dropLast(5)), q, user), ("another query", marker, foreignQuery, user),
            ("another user", marker, q, other), ("huge", String(repeating: "A", count: 100_000), q, user),
        ]
        var flipped = Array(marker.utf8)
        flipped[3] = flipped[3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        markers.append(("one character changed", String(decoding: flipped, as: UTF8.self), q, user))
        for (what, m, q, who) in markers {
            let reply = try await who.post("records/query", ["zoneID": zone, "continuationMarker": m, "query": q])
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(what): \(reply)")
            #expect(reply.reason.contains("continuationMarker"), "\(what): \(reply)")
        }
    }

    @Test("a comparator given a value it cannot compare, or an unknown one, is BAD_REQUEST naming it",
          arguments: ConformanceBackend.allCases)
    func refusedFilters(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let cases: [(String, [String: Any])] = [
            ("LIKE", filter("LIKE", "title", value("x"))),
            ("LESS_THAN", filter("LESS_THAN", "at", value(Self.paris, "LOCATION"))),
            ("BEGINS_WITH", filter("BEGINS_WITH", "n", value(1))),
            ("IN", filter("IN", "genre", value("jazz"))),
            ("LIST_CONTAINS", filter("LIST_CONTAINS", "tags", value(["a"], "STRING_LIST"))),
            ("NEAR", filter("NEAR", "at", value(Self.paris, "LOCATION"))),
            ("NEAR", filter("NEAR", "at", value("Paris"), distance: 10)),
            ("distance", filter("EQUALS", "n", value(1), distance: 10)),
            ("CONTAINS_ALL_TOKENS", filter("CONTAINS_ALL_TOKENS", "title", value(" ,.; "))),
            ("systemFieldName", ["comparator": "EQUALS", "systemFieldName": "recordType", "fieldValue": value("a")]),
            ("fieldName", ["comparator": "EQUALS", "fieldValue": value("a")]),
            ("fieldValue", ["comparator": "EQUALS", "fieldName": "n"]),
            ("bogus", ["comparator": "EQUALS", "fieldName": "n", "fieldValue": value(1), "bogus": true]),
        ]
        for (name, f) in cases {
            let reply = try await user.post("records/query", ["zoneID": zone, "query": query([f])])
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(name): \(reply)")
            #expect(reply.reason.contains(name), "\(name): \(reply)")
        }
        let badSort = try await user.post("records/query", ["zoneID": zone,
                                                            "query": query(sort: [["fieldName": "n", "order": 1]])])
        #expect(badSort.status == 400 && badSort.reason.contains("order"), "\(badSort)")
        for limit in [0, -1, 1.5] as [Any] {
            let reply = try await user.post("records/query", ["zoneID": zone, "resultsLimit": limit, "query": query()])
            #expect(reply.status == 400 && reply.reason.contains("resultsLimit"), "\(limit): \(reply)")
        }
    }

    @Test("hostile sizes are refused before they are evaluated: a huge IN list, thousands of filters, nesting",
          arguments: ConformanceBackend.allCases)
    func hostileSizes(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let hugeIn = filter("IN", "n", value(Array(0..<100_000), "INT64_LIST"))
        let manyFilters = Array(repeating: filter("EQUALS", "n", value(1)), count: 10_000)
        var deep: Any = [filter("EQUALS", "n", value(1))]
        for _ in 0..<200 { deep = [deep] }
        let cases: [(String, [String: Any])] = [
            ("values", query([hugeIn])),
            ("filterBy", query(manyFilters)),
            ("sortBy", query(sort: Array(repeating: ["fieldName": "n"], count: 1_000))),
            // A filter is a dictionary, never an array of them; the JSON reader refuses depth itself.
            ("filterBy[0]", ["recordType": "Song", "filterBy": [[filter("EQUALS", "n", value(1))]]]),
            ("nested deeper", ["recordType": "Song", "filterBy": deep]),
        ]
        for (name, q) in cases {
            let reply = try await user.post("records/query", ["zoneID": zone, "query": q])
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(name): \(reply)")
            #expect(reply.reason.contains(name), "\(name): \(reply)")
        }
        // At the limits, still answered.
        let atLimit = try await user.post("records/query", ["zoneID": zone, "query": query([
            filter("IN", "n", value(Array(0..<200), "INT64_LIST")),
        ] + Array(repeating: filter("GREATER_THAN", "n", value(0)), count: 63))])
        #expect(atLimit.status == 200 && names(atLimit) == ["a", "b", "c", "d"], "\(atLimit)")
    }

    @Test("zoneWide without a zoneID searches every zone of the private database; zoneID wins when given",
          arguments: ConformanceBackend.allCases)
    func zoneWide(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let other = try await user.makeZone("zone_d")
        _ = try await user.modify([operation("create", recordDictionary("z", type: "Song", fields: ["n": value(9)]))],
                                  zoneID: other)
        let q = query(sort: [["fieldName": "n", "ascending": false]])
        let wide = try await user.post("records/query", ["zoneWide": true, "query": q])
        #expect(wide.status == 200 && names(wide) == ["z", "d", "c", "b", "a"], "\(wide)")
        #expect(wide.records.first?["zoneID"].flatMap { ($0 as? [String: Any])?["zoneName"] as? String } == "zone_d")
        let paged = try await user.post("records/query", ["zoneWide": true, "resultsLimit": 2, "query": q])
        let marker = try #require(paged.body["continuationMarker"] as? String)
        // A zone made between two pages leaves the marker good.
        _ = try await user.makeZone("zone_e")
        let rest = try await user.post("records/query", ["zoneWide": true, "continuationMarker": marker, "query": q])
        #expect(names(paged) + names(rest) == ["z", "d", "c", "b", "a"])
        let ignored = try await user.post("records/query", ["zoneID": zone, "zoneWide": true, "query": q])
        #expect(ignored.status == 200 && names(ignored) == ["d", "c", "b", "a"])
        let defaultZone = try await user.post("records/query", ["query": q])
        #expect(defaultZone.status == 200 && defaultZone.records.isEmpty)
    }

    @Test("the shared database answers queries of a zone shared with the user, and refuses zoneWide",
          arguments: ConformanceBackend.allCases)
    func sharedDatabase(_ backend: ConformanceBackend) async throws {
        let (owner, zone) = try await setUp(backend)
        let guest = try await backend.user()
        let created = try await owner.post("shares/create", [
            "zoneID": zone, "participants": [["userRecordName": guest.name, "permission": "readOnly"]]])
        #expect(created.status == 200, "\(created)")
        let sharedZone: [String: Any] = ["zoneName": zone["zoneName"] ?? "", "ownerRecordName": owner.name]
        let accepted = try await guest.post("shares/accept", ["zoneID": sharedZone], database: "shared")
        #expect(accepted.status == 200, "\(accepted)")
        let reply = try await guest.post("records/query", [
            "zoneID": sharedZone, "query": query([filter("LIST_CONTAINS", "tags", value("cool"))]),
        ], database: "shared")
        #expect(reply.status == 200 && names(reply) == ["a", "c"], "\(reply)")
        let wide = try await guest.post("records/query", ["zoneWide": true, "query": query()], database: "shared")
        #expect(wide.status == 400 && wide.reason.contains("zoneWide"), "\(wide)")
        let stranger = try await backend.user()
        let refused = try await stranger.post("records/query", ["zoneID": sharedZone, "query": query()],
                                              database: "shared")
        #expect(refused.status >= 400 && refused.records.isEmpty, "\(refused)")
    }
}
