// CloudKit Web Services Reference, "Types and Dictionaries" → Filter Dictionary (`systemFieldName`)
// with "Fetching Records Using a Query (records/query)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html, …/QueryingRecords.html):
// a filter on a record's system fields — its name and its created/modified stamps — in the private,
// shared and public databases, with paging.
import Foundation
import RecordStore
import Testing

@Suite("CloudKit: Filter dictionary — systemFieldName")
struct QueryFilterSystemFieldTests {
    private func filter(_ comparator: String, _ system: String, _ v: Any, type: String? = nil) -> [String: Any] {
        var value: [String: Any] = ["value": v]
        if let type { value["type"] = type }
        return ["comparator": comparator, "systemFieldName": system, "fieldValue": value]
    }

    private func names(_ reply: Reply) -> [String] { reply.records.compactMap { $0["recordName"] as? String } }

    /// `a`, `b`, `c` of type Memo saved by `user` one request each (so their timestamps differ or
    /// tie, never decrease); returns each one's created timestamp.
    private func memos(_ user: ConformanceUser, zone: [String: Any]?, database: String = "private",
                       prefix: String = "") async throws -> [String: Int64] {
        var stamps: [String: Int64] = [:]
        for name in ["a", "b", "c"] {
            var body: [String: Any] = ["operations": [operation("create", recordDictionary(
                prefix + name, type: "Memo", fields: ["n": value(1)]))]]
            if let zone { body["zoneID"] = zone }
            let reply = try await user.post("records/modify", body, database: database)
            let created = try #require(reply.records.first?["created"] as? [String: Any], "\(reply)")
            stamps[name] = (created["timestamp"] as? NSNumber)?.int64Value
        }
        return stamps
    }

    private func query(_ user: ConformanceUser, _ filters: [[String: Any]], zone: [String: Any]?,
                       database: String = "private", extra: [String: Any] = [:]) async throws -> Reply {
        var body: [String: Any] = ["query": ["recordType": "Memo", "filterBy": filters]]
        if let zone { body["zoneID"] = zone }
        for (k, v) in extra { body[k] = v }
        return try await user.post("records/query", body, database: database)
    }

    @Test("recordName, created/modified user and timestamp, each comparator; the private database",
          arguments: ConformanceBackend.allCases)
    func privateDatabase(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let stamps = try await memos(user, zone: zone)
        let b = try #require(stamps["b"])
        let cases: [([String: Any], [String])] = [
            (filter("EQUALS", "recordName", ["recordName": "b"]), ["b"]),
            (filter("EQUALS", "recordName", "b", type: "STRING"), ["b"]),
            (filter("NOT_EQUALS", "recordName", ["recordName": "b"]), ["a", "c"]),
            (filter("IN", "recordName", [["recordName": "a"], ["recordName": "c"]], type: "REFERENCE_LIST"), ["a", "c"]),
            (filter("NOT_IN", "recordName", ["a", "c"], type: "STRING_LIST"), ["b"]),
            (filter("LESS_THAN", "recordName", "b"), ["a"]),
            (filter("GREATER_THAN_OR_EQUALS", "recordName", "b"), ["b", "c"]),
            (filter("BEGINS_WITH", "recordName", "c"), ["c"]),
            (filter("EQUALS", "createdUserRecordName", ["recordName": user.name]), ["a", "b", "c"]),
            (filter("NOT_EQUALS", "modifiedUserRecordName", ["recordName": user.name]), []),
            (filter("LESS_THAN_OR_EQUALS", "createdTimestamp", b, type: "TIMESTAMP"), stamps.filter { $0.value <= b }
                .keys.sorted()),
            (filter("GREATER_THAN", "modifiedTimestamp", b, type: "TIMESTAMP"), stamps.filter { $0.value > b }
                .keys.sorted()),
            (filter("LESS_THAN", "createdTimestamp", b), stamps.filter { $0.value < b }.keys.sorted()),
            (filter("EQUALS", "createdTimestamp", b, type: "TIMESTAMP"), stamps.filter { $0.value == b }
                .keys.sorted()),
            (filter("IN", "createdTimestamp", [b], type: "TIMESTAMP_LIST"), stamps.filter { $0.value == b }
                .keys.sorted()),
        ]
        for (f, expected) in cases {
            let reply = try await query(user, [f], zone: zone)
            #expect(reply.status == 200 && names(reply) == expected, "\(f): \(reply)")
        }
        // With a field filter, ANDed; paged by resultsLimit and continuationMarker.
        let both = [filter("NOT_EQUALS", "recordName", "a"),
                    ["comparator": "EQUALS", "fieldName": "n", "fieldValue": value(1)]]
        let first = try await query(user, both, zone: zone, extra: ["resultsLimit": 1])
        #expect(names(first) == ["b"], "\(first)")
        let marker = try #require(first.body["continuationMarker"] as? String)
        let rest = try await query(user, both, zone: zone, extra: ["continuationMarker": marker])
        #expect(names(rest) == ["c"] && rest.body["continuationMarker"] == nil, "\(rest)")
        // Refused by name: an unknown system field, both names, a value of the wrong type, a list comparator.
        let refused: [[String: Any]] = [
            filter("EQUALS", "recordType", "Memo"),
            filter("EQUALS", "recordName", 5),
            filter("EQUALS", "createdTimestamp", "yesterday"),
            filter("LIST_CONTAINS", "recordName", "a"),
            filter("NEAR", "recordName", ["latitude": 48.8566, "longitude": 2.3522], type: "LOCATION"),
            ["comparator": "EQUALS", "fieldName": "n", "systemFieldName": "recordName", "fieldValue": value("a")],
            ["comparator": "EQUALS", "fieldValue": value("a")],
        ]
        for f in refused {
            let reply = try await query(user, [f], zone: zone)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(f): \(reply)")
        }
    }

    @Test("the shared database: a participant filters the owner's records by system fields",
          arguments: ConformanceBackend.allCases)
    func sharedDatabase(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let zone = try await owner.makeZone()
        _ = try await memos(owner, zone: zone)
        let created = try await owner.post("shares/create", [
            "zoneID": zone, "participants": [["userRecordName": guest.name, "permission": "readOnly"]]])
        #expect(created.status == 200, "\(created)")
        let theirs: [String: Any] = ["zoneName": zone["zoneName"] ?? "", "ownerRecordName": owner.name]
        _ = try await guest.post("shares/accept", ["zoneID": theirs], database: "shared")
        let reply = try await query(guest, [filter("IN", "recordName", ["a", "b"], type: "STRING_LIST"),
                                            filter("EQUALS", "createdUserRecordName", owner.name)],
                                    zone: theirs, database: "shared")
        #expect(reply.status == 200 && names(reply) == ["a", "b"], "\(reply)")
    }

    @Test("the public database: records by their creator", arguments: ConformanceBackend.allCases)
    func publicDatabase(_ backend: ConformanceBackend) async throws {
        let writer = try await backend.user()
        let other = try await backend.user()
        let prefix = "\(writer.name)-"
        _ = try await memos(writer, zone: nil, database: "public", prefix: prefix)
        let reply = try await query(other, [filter("EQUALS", "createdUserRecordName", ["recordName": writer.name])],
                                    zone: nil, database: "public")
        #expect(reply.status == 200 && names(reply) == ["a", "b", "c"].map { prefix + $0 }, "\(reply)")
        let one = try await query(other, [filter("EQUALS", "recordName", prefix + "b")], zone: nil, database: "public")
        #expect(one.status == 200 && names(one) == [prefix + "b"], "\(one)")
        let none = try await query(other, [filter("EQUALS", "createdUserRecordName", other.name)], zone: nil,
                                   database: "public")
        #expect(none.status == 200 && names(none).isEmpty, "\(none)")
    }

    @Test("a subscription's query may not filter on system fields: BAD_REQUEST naming it",
          arguments: [ConformanceBackend.embedded])
    func subscriptionsRefuse(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let reply = try await user.post("subscriptions/modify", ["operations": [[
            "operationType": "create", "subscription": [
                "subscriptionID": "s", "subscriptionType": "query", "zoneID": zone,
                "query": ["recordType": "Memo", "filterBy": [filter("EQUALS", "recordName", "a")]],
                "firesOn": ["create"]]]]])
        #expect(reply.status == 400 || reply.body["subscriptions"] != nil, "\(reply)")
        let text = "\(reply)"
        #expect(text.contains("systemFieldName") && text.contains("BAD_REQUEST"), "\(reply)")
    }
}
