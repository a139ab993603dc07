// CloudKit Web Services Reference, "Fetching Record Information (records/resolve)" and accepting
// shares (records/accept) (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// FetchingRecordInformation.html): short GUIDs in, one ShortGUID Result Dictionary (or error
// dictionary) out per short GUID, in order.
import Foundation
import Testing

@Suite("CloudKit: Fetching Record Information (records/resolve) and accepting shares (records/accept)")
struct FetchingRecordInformationTests {
    /// A zone of a new owner, shared as `participants` and `publicPermission`; its short GUID.
    private func sharedZone(_ backend: ConformanceBackend, _ participants: [(String, String)],
                            publicPermission: String? = nil, owner: ConformanceUser) async throws -> String {
        let zone = try await owner.makeZone()
        let saved = try await owner.modify([operation("create", zoneShareRecord(
            participants, publicPermission: publicPermission))], zoneID: zone)
        return try #require(saved.records.first?["shortGUID"] as? String, "\(saved)")
    }

    private func results(_ reply: Reply) -> [[String: Any]] { reply.body["results"] as? [[String: Any]] ?? [] }

    @Test("resolve: share, zone, owner, participation; by URL too; forged NOT_FOUND, stranger ACCESS_DENIED",
          arguments: ConformanceBackend.allCases)
    func resolve(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let stranger = try await backend.user()
        let guid = try await sharedZone(backend, [(guest.name, "READ_ONLY")], owner: owner)
        let forged = String(guid.reversed())
        let reply = try await guest.post("records/resolve", ["shortGUIDs": [
            ["value": guid, "shouldFetchRootRecord": true], ["value": "http://example.org/share/\(guid)"],
            ["value": forged]]], database: "public")
        #expect(reply.status == 200, "\(reply)")
        let answers = results(reply)
        try #require(answers.count == 3, "\(reply)")
        #expect(answers[0]["shortGUID"] as? String == guid)
        #expect((answers[0]["zoneID"] as? [String: Any])?["ownerRecordName"] as? String == owner.name)
        #expect((answers[0]["ownerIdentity"] as? [String: Any])?["userRecordName"] as? String == owner.name)
        #expect(answers[0]["participantStatus"] as? String == "PENDING")
        #expect(answers[0]["participantPermission"] as? String == "READ_ONLY")
        #expect((answers[0]["share"] as? [String: Any])?["recordName"] as? String == "cloudkit.zoneshare")
        #expect(answers[0]["rootRecord"] == nil)
        #expect(answers[1]["participantStatus"] as? String == "PENDING", "\(answers[1])")
        #expect(answers[2].code == "NOT_FOUND" && answers[2]["shortGUID"] as? String == forged)
        let denied = try await stranger.post("records/resolve", ["shortGUIDs": [["value": guid]]], database: "public")
        #expect(results(denied).first?.code == "ACCESS_DENIED", "\(denied)")
        let asOwner = try await owner.post("records/resolve", ["shortGUIDs": [["value": guid]]], database: "private")
        #expect(results(asOwner).first?["participantType"] as? String == "OWNER", "\(asOwner)")

        let malformed: [(String, [String: Any])] = [
            ("shortGUIDs", [:]), ("value", ["shortGUIDs": [[:]]]), ("bogus", ["shortGUIDs": [], "bogus": 1]),
            ("200", ["shortGUIDs": Array(repeating: ["value": "x"], count: 201)]),
        ]
        for (name, body) in malformed {
            let bad = try await guest.post("records/resolve", body, database: "public")
            #expect(bad.status == 400 && bad.code == "BAD_REQUEST" && bad.reason.contains(name), "\(name): \(bad)")
        }
    }

    @Test("accept: the zone joins the shared database with its permission, twice changes nothing, strangers refused",
          arguments: ConformanceBackend.allCases)
    func accept(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let stranger = try await backend.user()
        let guid = try await sharedZone(backend, [(guest.name, "READ_ONLY")], owner: owner)
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let refused = try await stranger.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        #expect(results(refused).first?.code == "ACCESS_DENIED", "\(refused)")
        let before = try await guest.post("zones/lookup", ["zones": [theirs]], database: "shared")
        #expect(before.zones.first?.code == "ACCESS_DENIED", "\(before)")

        let first = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        let accepted = try #require(results(first).first, "\(first)")
        #expect(accepted["participantStatus"] as? String == "ACCEPTED", "\(first)")
        let tag = (accepted["share"] as? [String: Any])?.tag
        let second = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        #expect((results(second).first?["share"] as? [String: Any])?.tag == tag, "\(second)")
        let listed = try await guest.post("zones/list", [:], database: "shared")
        #expect(listed.zones.count == 1, "\(listed)")

        let read = try await guest.post("records/query", ["zoneID": theirs, "query": ["recordType": "Note"]],
                                        database: "shared")
        #expect(read.status == 200, "\(read)")
        let write = try await guest.post("records/modify", [
            "zoneID": theirs, "operations": [operation("create", recordDictionary("g", fields: [:]))]],
            database: "shared")
        #expect(write.recordCodes == ["ACCESS_DENIED"] || write.code == "ACCESS_DENIED", "\(write)")
        let ownerAccepts = try await owner.post("records/accept", ["shortGUIDs": [["value": guid]]])
        #expect(results(ownerAccepts).first?.code == "BAD_REQUEST", "\(ownerAccepts)")

        let open = try await sharedZone(backend, [], publicPermission: "READ_WRITE", owner: try await backend.user())
        let joined = try await stranger.post("records/accept", ["shortGUIDs": [["value": open]]], database: "shared")
        #expect(results(joined).first?["participantType"] as? String == "PRIVATE_USER", "\(joined)")
        #expect(results(joined).first?["participantPermission"] as? String == "READ_WRITE", "\(joined)")
    }

    @Test("resolve a record's own short GUID (createShortGUID): whoever may read it, no share; accept BAD_REQUEST",
          arguments: ConformanceBackend.allCases)
    func resolveRecord(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let stranger = try await backend.user()
        let zoneShare = try await sharedZone(backend, [(guest.name, "READ_ONLY")], owner: owner)
        var note = recordDictionary("note", fields: ["v": value(1)])
        note["createShortGUID"] = true
        let zone: [String: Any] = ["zoneName": "zone_c"]
        let saved = try await owner.modify([operation("create", note)], zoneID: zone)
        let guid = try #require(saved.records.first?["shortGUID"] as? String, "\(saved)")
        let ask: [String: Any] = ["shortGUIDs": [["value": guid, "shouldFetchRootRecord": true,
                                                  "rootRecordDesiredKeys": [String]()]]]

        let mine = try #require(results(try await owner.post("records/resolve", ask, database: "public")).first)
        #expect(mine["participantType"] as? String == "OWNER" && mine["share"] == nil, "\(mine)")
        #expect(mine["participantPermission"] as? String == "READ_WRITE")
        #expect((mine["ownerIdentity"] as? [String: Any])?["userRecordName"] as? String == owner.name)
        let root = try #require(mine["rootRecord"] as? [String: Any], "\(mine)")
        #expect(root["recordName"] as? String == "note" && root["shortGUID"] as? String == guid)
        #expect((root["fields"] as? [String: Any])?.isEmpty == true)

        // Its share-URL form, as a share's `url` is made: records/resolve reads the short GUID from it, and
        // a GET on it answers the page, which resolves it as a record (nothing to accept).
        let byURL = try #require(results(try await owner.post("records/resolve", ["shortGUIDs": [
            ["value": "http://example.org/share/\(guid)"]]], database: "private")).first)
        #expect(byURL["shortGUID"] as? String == guid && byURL["share"] == nil
                    && byURL["participantType"] as? String == "OWNER", "\(byURL)")
        let page = try await owner.server.raw("GET", "/share/\(guid)", write: false)
        #expect(page.status == 200 && page.headers["Content-Type"]?.hasPrefix("text/html") == true, "\(page.status)")
        #expect(page.text.contains(guid) && page.text.contains("shouldFetchRootRecord") && page.text.contains("!r.share"))

        let pending = try await guest.post("records/resolve", ask, database: "public")
        #expect(results(pending).first?.code == "ACCESS_DENIED", "\(pending)")
        _ = try await guest.post("records/accept", ["shortGUIDs": [["value": zoneShare]]], database: "shared")
        let theirs = try #require(results(try await guest.post("records/resolve", ask, database: "shared")).first)
        #expect(theirs["participantType"] as? String == "PRIVATE_USER", "\(theirs)")
        #expect(theirs["participantPermission"] as? String == "READ_ONLY")
        let denied = try await stranger.post("records/resolve", ask, database: "public")
        #expect(results(denied).first?.code == "ACCESS_DENIED", "\(denied)")
        let accepted = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        #expect(results(accepted).first?.code == "BAD_REQUEST", "\(accepted)")

        var open = recordDictionary("poster", fields: [:])
        open["createShortGUID"] = true
        let posted = try await owner.post("records/modify", ["operations": [operation("create", open)]],
                                          database: "public")
        let publicGUID = try #require(posted.records.first?["shortGUID"] as? String, "\(posted)")
        let seen = try #require(results(try await stranger.post(
            "records/resolve", ["shortGUIDs": [["value": publicGUID]]], database: "public")).first)
        #expect(seen["participantType"] as? String == "PUBLIC_USER" && seen["rootRecord"] == nil, "\(seen)")
        #expect((seen["ownerIdentity"] as? [String: Any])?["userRecordName"] as? String == owner.name)

        let tag = try #require(saved.records.first?.tag)
        _ = try await owner.modify([operation("delete", ["recordName": "note", "recordChangeTag": tag])],
                                   zoneID: zone)
        let gone = try await owner.post("records/resolve", ask, database: "public")
        #expect(results(gone).first?.code == "NOT_FOUND", "\(gone)")
    }
}
