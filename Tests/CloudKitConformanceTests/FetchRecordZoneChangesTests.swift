// CloudKit Web Services Reference, "Fetching Record Zone Changes (changes/zone)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/FetchingRecordZoneChanges(changeszone).html):
// the request keys (each also in a zone dictionary, overriding the request's), the Zone Record
// Fetch Dictionary and the Zone Record Fetch Error Dictionary.
import Foundation
import Testing

@Suite("CloudKit: Fetching Record Zone Changes (changes/zone)")
struct FetchRecordZoneChangesTests {
    private func setUp(_ backend: ConformanceBackend) async throws -> (ConformanceUser, [String: Any]) {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([
            operation("create", recordDictionary("a", type: "Song", fields: ["x": value(1), "y": value("s")])),
            operation("create", recordDictionary("b", type: "Album", fields: ["x": value(2)])),
            operation("create", recordDictionary("c", type: "Song", fields: ["x": value(3)])),
        ], zoneID: zone)
        return (user, zone)
    }

    private func changes(_ user: ConformanceUser, _ zones: [[String: Any]],
                         _ extra: [String: Any] = [:]) async throws -> Reply {
        var body = extra
        body["zones"] = zones
        return try await user.post("changes/zone", body)
    }

    @Test("without a token: every live record, a syncToken, moreComing and the zoneID",
          arguments: ConformanceBackend.allCases)
    func everything(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await changes(user, [["zoneID": zone]])
        #expect(reply.status == 200)
        let result = try #require(reply.zones.first)
        #expect(Set(((result["records"] as? [[String: Any]]) ?? []).compactMap { $0["recordName"] as? String })
                == ["a", "b", "c"])
        #expect((result["syncToken"] as? String)?.isEmpty == false && result["moreComing"] as? Bool == false)
        let zoneID = try #require(result["zoneID"] as? [String: Any])
        #expect(zoneID["zoneName"] as? String == "zone_c" && zoneID["ownerRecordName"] as? String == user.name)
    }

    @Test("with a token: what changed since, deletions as {recordName, deleted: true}",
          arguments: ConformanceBackend.allCases)
    func sinceToken(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let token = try #require(try await changes(user, [["zoneID": zone]]).zones.first?["syncToken"] as? String)
        _ = try await user.modify([operation("forceDelete", ["recordName": "a"]),
                                   operation("forceUpdate", recordDictionary("b", type: "Album",
                                                                             fields: ["x": value(5)]))], zoneID: zone)
        let records = try #require(try await changes(user, [["zoneID": zone, "syncToken": token]])
            .zones.first?["records"] as? [[String: Any]])
        let deleted = records.filter { $0["deleted"] as? Bool == true }.compactMap { $0["recordName"] as? String }
        #expect(deleted == ["a"])
        #expect(records.filter { $0["deleted"] == nil }.map { $0.int("x") } == [5])
    }

    @Test("desiredKeys and numbersAsStrings (also spelt numberAsStrings); a zone's own override the request's",
          arguments: ConformanceBackend.allCases)
    func rendering(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await changes(user, [["zoneID": zone, "desiredKeys": ["y"]]], ["desiredKeys": ["x"],
                                                                                        "numberAsStrings": true])
        let records = try #require(reply.zones.first?["records"] as? [[String: Any]])
        #expect(records.allSatisfy { $0.fieldNames.allSatisfy { $0 == "y" } })
        let numbers = try await changes(user, [["zoneID": zone]], ["numbersAsStrings": true])
        let fetched = try #require(numbers.zones.first?["records"] as? [[String: Any]])
        #expect(Set(fetched.compactMap { $0.field("x") as? String }) == ["1", "2", "3"])
    }

    @Test("desiredRecordTypes keeps the changes of those record types", arguments: ConformanceBackend.allCases)
    func desiredRecordTypes(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await changes(user, [["zoneID": zone]], ["desiredRecordTypes": ["Album"]])
        let records = try #require(reply.zones.first?["records"] as? [[String: Any]])
        #expect(records.compactMap { $0["recordName"] as? String } == ["b"])
    }

    @Test("resultsLimit pages the feed with moreComing; a page holds at most 200 records (Data Size Limits)",
          arguments: ConformanceBackend.allCases)
    func resultsLimit(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let first = try #require(try await changes(user, [["zoneID": zone, "resultsLimit": 2]]).zones.first)
        #expect((first["records"] as? [Any])?.count == 2 && first["moreComing"] as? Bool == true)
        let rest = try #require(try await changes(user, [["zoneID": zone, "syncToken": first["syncToken"] as Any]])
            .zones.first)
        #expect((rest["records"] as? [Any])?.count == 1 && rest["moreComing"] as? Bool == false)
        let bad = try await changes(user, [["zoneID": zone, "resultsLimit": 0]])
        #expect(bad.status == 400 && bad.reason.contains("resultsLimit"))
        // 250 more records: asked for 500 at once, a page is 200.
        for batch in 0..<2 {
            _ = try await user.modify((0..<125).map {
                operation("create", recordDictionary("r\(batch)_\($0)", fields: [:]))
            }, zoneID: zone)
        }
        let page = try #require(try await changes(user, [["zoneID": zone, "resultsLimit": 500]]).zones.first)
        #expect((page["records"] as? [Any])?.count == 200 && page["moreComing"] as? Bool == true)
    }

    @Test("reverse: false is the default; true is refused by name", arguments: ConformanceBackend.allCases)
    func reverse(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        #expect(try await changes(user, [["zoneID": zone]], ["reverse": false]).status == 200)
        let refused = try await changes(user, [["zoneID": zone, "reverse": true]])
        #expect(refused.status == 400 && refused.code == "BAD_REQUEST" && refused.reason.contains("reverse"))
    }

    @Test("a zone that fails answers its Zone Record Fetch Error Dictionary; the others their changes",
          arguments: ConformanceBackend.allCases)
    func perZoneErrors(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await changes(user, [["zoneID": ["zoneName": "zone_missing"]], ["zoneID": zone],
                                             ["zoneID": zone, "syncToken": "not-a-token"]])
        #expect(reply.status == 200 && reply.zones.count == 3)
        #expect(reply.zones[0].code == "ZONE_NOT_FOUND" && (reply.zones[0]["reason"] as? String)?.isEmpty == false)
        #expect((reply.zones[0]["zoneID"] as? [String: Any])?["zoneName"] as? String == "zone_missing")
        #expect(reply.zones[1].code == nil && reply.zones[1]["syncToken"] != nil)
        #expect(reply.zones[2].code == "BAD_REQUEST")
    }

    @Test("request keys: zones required, zoneID required in each, unknown keys refused",
          arguments: ConformanceBackend.allCases)
    func requestKeys(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        #expect(try await user.post("changes/zone", [:]).reason.contains("zones"))
        let noZone = try await changes(user, [["syncToken": "x"]])
        #expect(noZone.status == 400 && noZone.reason.contains("zoneID"))
        let unknown = try await changes(user, [["zoneID": zone, "since": "x"]])
        #expect(unknown.status == 400 && unknown.reason.contains("since"))
    }
}
