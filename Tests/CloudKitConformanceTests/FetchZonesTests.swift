// CloudKit Web Services Reference, "Fetching Zones (zones/list)" and "Modifying Zones
// (zones/modify)" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// GettingAllZones.html, ModifyZones.html): every zone with its Zone Dictionary (`zoneID`, `atomic`,
// `syncToken`); zone operations `create` and `delete` of `zone.zoneID`, answered in order; any
// key the pages do not document is BAD_REQUEST naming it.
import Foundation
import Testing

@Suite("CloudKit: Fetching Zones (zones/list) and Modifying Zones (zones/modify)")
struct FetchZonesTests {
    @Test("zones/list: every zone with atomic and a syncToken changes/zone resumes from; GET or POST",
          arguments: ConformanceBackend.allCases)
    func list(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([operation("create", recordDictionary("old", fields: [:]))], zoneID: zone)
        let listed = try await user.post("zones/list", [:])
        #expect(listed.status == 200 && listed.zones.count == 2, "\(listed)")
        let custom = try #require(listed.zones.first { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String
                                                           == "zone_c" })
        #expect(custom["atomic"] as? Bool == true)
        let token = try #require(custom["syncToken"] as? String, "\(custom)")
        let defaultZone = listed.zones.first { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String
                                                   == "_defaultZone" }
        #expect(defaultZone?["atomic"] as? Bool == false && defaultZone?["syncToken"] == nil, "\(listed)")
        _ = try await user.modify([operation("create", recordDictionary("new", fields: [:]))], zoneID: zone)
        let changes = try await user.post("changes/zone", ["zones": [["zoneID": zone, "syncToken": token]]])
        let names = (changes.zones.first?["records"] as? [[String: Any]] ?? []).map { $0["recordName"] as? String }
        #expect(names == ["new"], "\(changes)")
        let refused = try await user.post("zones/list", ["zoneID": zone])
        #expect(refused.status == 400 && refused.code == "BAD_REQUEST" && refused.reason.contains("zoneID"),
                "\(refused)")
    }

    @Test("zones/modify: answers in the request's order with the Zone Dictionary; unknown keys BAD_REQUEST by name",
          arguments: ConformanceBackend.allCases)
    func modify(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        _ = try await user.makeZone("z1")
        func op(_ type: String, _ name: String) -> [String: Any] {
            ["operationType": type, "zone": ["zoneID": ["zoneName": name]]]
        }
        let mixed = try await user.post("zones/modify", ["operations": [op("delete", "z1"), op("create", "z2")]])
        #expect(mixed.status == 200, "\(mixed)")
        #expect(mixed.zones.first?["deleted"] as? Bool == true, "\(mixed)")
        #expect((mixed.zones.last?["zoneID"] as? [String: Any])?["zoneName"] as? String == "z2"
                    && mixed.zones.last?["atomic"] as? Bool == true, "\(mixed)")
        let cases: [(String, [String: Any])] = [
            ("operations", [:]),
            ("atomic", ["operations": [op("create", "z3")], "atomic": true]),
            ("zoneID", ["operations": [["operationType": "create", "zoneID": ["zoneName": "z3"]]]]),
            ("zone", ["operations": [["operationType": "create"]]]),
            ("capacity", ["operations": [["operationType": "create",
                                           "zone": ["zoneID": ["zoneName": "z3"], "capacity": 1]]]]),
            ("rename", ["operations": [op("rename", "z3")]]),
        ]
        for (name, body) in cases {
            let reply = try await user.post("zones/modify", body)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST" && reply.reason.contains(name),
                    "\(name): \(reply)")
        }
        let listed = try await user.post("zones/list", [:])
        #expect(!listed.zones.contains { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String == "z3" })
    }
}
