// CloudKit Web Services Reference, "Fetching Zones by Identifier (zones/lookup)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/GettingZonesbyIdentifier.html):
// one Zone Dictionary or Zone Fetch Error Dictionary per zone asked, in the request's order.
import Foundation
import Testing

@Suite("CloudKit: Fetching Zones by Identifier (zones/lookup)")
struct FetchZonesByIdentifierTests {
    @Test("zones come with zoneID, atomic and a syncToken changes/zone resumes from; a missing one: ZONE_NOT_FOUND",
          arguments: ConformanceBackend.allCases)
    func lookup(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([operation("create", recordDictionary("old", fields: ["n": value(1)]))], zoneID: zone)
        let reply = try await user.post("zones/lookup", ["zones": [zone, ["zoneName": "_defaultZone"],
                                                                   ["zoneName": "missing"]]])
        #expect(reply.status == 200, "\(reply)")
        let zones = reply.zones
        try #require(zones.count == 3)
        #expect((zones[0]["zoneID"] as? [String: Any])?["zoneName"] as? String == "zone_c")
        #expect((zones[0]["zoneID"] as? [String: Any])?["ownerRecordName"] as? String == user.name)
        #expect(zones[0]["atomic"] as? Bool == true)
        let token = try #require(zones[0]["syncToken"] as? String)
        #expect(zones[1]["atomic"] as? Bool == false && zones[1]["syncToken"] == nil)
        #expect(zones[2].code == "ZONE_NOT_FOUND")
        #expect((zones[2]["zoneID"] as? [String: Any])?["zoneName"] as? String == "missing")

        _ = try await user.modify([operation("create", recordDictionary("new", fields: ["n": value(2)]))], zoneID: zone)
        let changes = try await user.post("changes/zone", ["zones": [["zoneID": zone, "syncToken": token]]])
        let records = changes.zones.first?["records"] as? [[String: Any]] ?? []
        #expect(records.map { $0["recordName"] as? String } == ["new"], "\(changes)")
    }

    @Test("another user's zone in the private database is refused per zone; a shared zone is found once accepted",
          arguments: ConformanceBackend.allCases)
    func access(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let zone = try await owner.makeZone()
        let guest = try await backend.user()
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let denied = try await guest.post("zones/lookup", ["zones": [theirs]])
        #expect(denied.status == 200 && denied.zones.first?.code == "ACCESS_DENIED", "\(denied)")
        let notYet = try await guest.post("zones/lookup", ["zones": [theirs]], database: "shared")
        #expect(notYet.zones.first?.code == "ACCESS_DENIED", "\(notYet)")
        _ = try await owner.post("shares/create", [
            "zoneID": zone, "participants": [["userRecordName": guest.name, "permission": "readOnly"]]])
        _ = try await guest.post("shares/accept", ["zoneID": theirs], database: "shared")
        let found = try await guest.post("zones/lookup", ["zones": [theirs]], database: "shared")
        #expect(found.zones.first?.code == nil && found.zones.first?["atomic"] as? Bool == true, "\(found)")
    }

    @Test("a malformed request is BAD_REQUEST naming what is wrong; more than 200 zones is refused whole",
          arguments: ConformanceBackend.allCases)
    func malformed(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let cases: [(String, [String: Any])] = [
            ("zones", [:]),
            ("zones", ["zones": "zone_c"]),
            ("zones[0]", ["zones": ["zone_c"]]),
            ("zoneName", ["zones": [["ownerRecordName": user.name]]]),
            ("zoneID", ["zones": [["zoneID": ["zoneName": "zone_c"]]]]),
            ("bogus", ["zones": [], "bogus": 1]),
            ("201", ["zones": Array(repeating: ["zoneName": "z"], count: 201)]),
        ]
        for (name, body) in cases {
            let reply = try await user.post("zones/lookup", body)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(name): \(reply)")
            #expect(reply.reason.contains(name), "\(name): \(reply)")
        }
    }
}
