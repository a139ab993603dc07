// CloudKit Web Services Reference, "Fetching Zone Changes (zones/changes)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/GetZoneChanges.html): request
// `syncToken`, `resultsLimit`; response `zones` (Zone Dictionaries), `syncToken`, `moreComing`.
// Also "Modifying Zones (zones/modify)" (ModifyZones.html), whose results are Zone Dictionaries,
// `syncToken` among their keys.
import Foundation
import Testing

@Suite("CloudKit: Fetching Zone Changes (zones/changes), and zones/modify's syncToken")
struct FetchZoneChangesTests {
    @Test("zones/changes: every zone with its Zone Dictionary, then only what changed; a deleted zone ZONE_NOT_FOUND",
          arguments: ConformanceBackend.allCases)
    func zoneChanges(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let a = try await user.makeZone("zc_a"), b = try await user.makeZone("zc_b")
        let all = try await user.post("zones/changes", [:])
        #expect(all.status == 200 && all.body["moreComing"] as? Bool == false, "\(all)")
        let names = all.zones.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        #expect(names == ["zc_a", "zc_b"], "\(all)")
        #expect(all.zones.allSatisfy { $0["syncToken"] is String && $0["atomic"] as? Bool == true }, "\(all)")
        let token = try #require(all.body["syncToken"] as? String)

        _ = try await user.modify([operation("create", recordDictionary("n1"))], zoneID: a)
        _ = try await user.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": b]]]])
        let since = try await user.post("zones/changes", ["syncToken": token])
        #expect(since.status == 200, "\(since)")
        let changed = since.zones.first { $0["serverErrorCode"] == nil }
        let deleted = since.zones.first { $0["serverErrorCode"] != nil }
        #expect((changed?["zoneID"] as? [String: Any])?["zoneName"] as? String == "zc_a", "\(since)")
        #expect(deleted?.code == "ZONE_NOT_FOUND"
                && (deleted?["zoneID"] as? [String: Any])?["zoneName"] as? String == "zc_b", "\(since)")
        // The zone's token resumes its record feed: only what came after it.
        let zoneToken = try #require(changed?["syncToken"] as? String)
        let feed = try await user.post("changes/zone", ["zones": [["zoneID": a, "syncToken": zoneToken]]])
        #expect((feed.zones.first?["records"] as? [Any])?.isEmpty == true, "\(feed)")

        let paged = try await user.post("zones/changes", ["resultsLimit": 1])
        #expect(paged.zones.count == 1 && paged.body["moreComing"] as? Bool == true, "\(paged)")
        let unknown = try await user.post("zones/changes", ["zones": []])
        #expect(unknown.status == 400 && unknown.code == "BAD_REQUEST" && unknown.reason.contains("zones"),
                "\(unknown)")
        let pub = try await user.post("zones/changes", [:], database: "public")
        #expect(pub.status == 400 && pub.code == "BAD_REQUEST", "\(pub)")
    }

    @Test("zones/modify answers a created zone's Zone Dictionary with its syncToken",
          arguments: ConformanceBackend.allCases)
    func modifyAnswersSyncToken(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let reply = try await user.post("zones/modify", ["operations": [
            ["operationType": "create", "zone": ["zoneID": ["zoneName": "zt_new"]]]]])
        let zone = try #require(reply.zones.first, "\(reply)")
        let token = try #require(zone["syncToken"] as? String, "\(reply)")
        #expect(zone["atomic"] as? Bool == true)
        let feed = try await user.post("changes/zone",
                                       ["zones": [["zoneID": ["zoneName": "zt_new"], "syncToken": token]]])
        #expect(feed.status == 200 && feed.zones.first?["serverErrorCode"] == nil, "\(feed)")
        // Mixed: answered in the request's order, the saved zone (and only it) with its token.
        let mixed = try await user.post("zones/modify", ["operations": [
            ["operationType": "delete", "zone": ["zoneID": ["zoneName": "zt_new"]]],
            ["operationType": "create", "zone": ["zoneID": ["zoneName": "zt_two"]]],
            ["operationType": "create", "zone": ["zoneID": ["zoneName": "bad name!"]]]]])
        #expect(mixed.zones.count == 3 && mixed.zones[0]["deleted"] as? Bool == true
                    && mixed.zones[0]["syncToken"] == nil, "\(mixed)")
        #expect((mixed.zones[1]["zoneID"] as? [String: Any])?["zoneName"] as? String == "zt_two"
                    && mixed.zones[1]["syncToken"] is String, "\(mixed)")
        #expect(mixed.zones[2]["serverErrorCode"] as? String == "BAD_REQUEST"
                    && mixed.zones[2]["syncToken"] == nil, "\(mixed)")
    }
}
