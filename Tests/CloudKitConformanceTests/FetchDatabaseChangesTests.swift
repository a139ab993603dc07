// CloudKit Web Services Reference, "Fetching Database Changes (changes/database)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/FetchingDatabaseChanges(changeszone).html):
// `syncToken` and `resultsLimit`; the zones that changed, a token, moreComing.
import Foundation
import Testing

@Suite("CloudKit: Fetching Database Changes (changes/database)")
struct FetchDatabaseChangesTests {
    @Test("the zones that changed since the token; resultsLimit pages them", arguments: ConformanceBackend.allCases)
    func changes(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let a = try await user.makeZone("zone_a")
        _ = try await user.makeZone("zone_b")
        let all = try await user.post("changes/database", [:])
        #expect(all.status == 200 && all.zones.count == 2 && all.body["moreComing"] as? Bool == false)
        let page = try await user.post("changes/database", ["resultsLimit": 1])
        #expect(page.zones.count == 1 && page.body["moreComing"] as? Bool == true)
        let token = try #require(all.body["syncToken"] as? String)
        _ = try await user.modify([operation("create", recordDictionary("n", fields: [:]))], zoneID: a)
        let since = try await user.post("changes/database", ["syncToken": token])
        #expect(since.zones.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String } == ["zone_a"])
    }

    @Test("request keys: resultsLimit a whole number of at least 1, unknown keys refused",
          arguments: ConformanceBackend.allCases)
    func requestKeys(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let bad = try await user.post("changes/database", ["resultsLimit": "ten"])
        #expect(bad.status == 400 && bad.reason.contains("resultsLimit"))
        let unknown = try await user.post("changes/database", ["zoneID": ["zoneName": "x"]])
        #expect(unknown.status == 400 && unknown.reason.contains("zoneID"))
    }
}
