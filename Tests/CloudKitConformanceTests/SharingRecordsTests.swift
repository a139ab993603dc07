// CloudKit Web Services Reference, "Types and Dictionaries" (Share Request Keys, the Share
// Participant dictionary) with "Modifying Records (records/modify)" and "Fetching Records by
// Record Name (records/lookup)" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// Types.html, ModifyRecords.html, LookupRecords.html): a zone's share is the record
// `cloudkit.zoneshare` of type `cloudkit.share`, saved and deleted like any record.
import Foundation
import Testing

/// The share record of a zone, as a records/modify operation sends it.
func zoneShareRecord(_ participants: [(String, String)], publicPermission: String? = nil,
                     tag: String? = nil) -> [String: Any] {
    var o: [String: Any] = ["recordName": "cloudkit.zoneshare", "recordType": "cloudkit.share",
                            "participants": participants.map { user, permission in
                                ["userIdentity": ["userRecordName": user], "permission": permission]
                            }]
    if let publicPermission { o["publicPermission"] = publicPermission }
    if let tag { o["recordChangeTag"] = tag }
    return o
}

extension [String: Any] {
    /// A share record's participants: user record name → (permission, acceptanceStatus, type).
    var shareParticipants: [String: [String]] {
        var out: [String: [String]] = [:]
        for p in self["participants"] as? [[String: Any]] ?? [] {
            guard let user = (p["userIdentity"] as? [String: Any])?["userRecordName"] as? String else { continue }
            out[user] = [p["permission"] as? String ?? "", p["acceptanceStatus"] as? String ?? "",
                         p["type"] as? String ?? ""]
        }
        return out
    }
}

@Suite("CloudKit: Sharing Records (cloudkit.share through records/modify)")
struct SharingRecordsTests {
    @Test("cloudkit.zoneshare: saved, looked up, updated under its tag keeping acceptance, deleted taking access",
          arguments: ConformanceBackend.allCases)
    func lifecycle(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let zone = try await owner.makeZone()
        let guest = try await backend.user()
        let saved = try await owner.modify([operation("create", zoneShareRecord([(guest.name, "READ_WRITE")]))],
                                           zoneID: zone)
        #expect(saved.status == 200 && saved.recordCodes == [nil], "\(saved)")
        let share = try #require(saved.records.first)
        #expect(share["recordType"] as? String == "cloudkit.share" && share["publicPermission"] as? String == "NONE")
        let guid = try #require(share["shortGUID"] as? String)
        #expect(guid.count == 26)
        if let url = share["url"] as? String { #expect(url.hasSuffix("/share/\(guid)")) }
        #expect((share["owner"] as? [String: Any])?["type"] as? String == "OWNER")
        #expect(share.shareParticipants[guest.name] == ["READ_WRITE", "PENDING", "PRIVATE_USER"], "\(share)")
        #expect(share.shareParticipants[owner.name]?[2] == "OWNER")

        let again = try await owner.modify([operation("create", zoneShareRecord([]))], zoneID: zone)
        #expect(again.recordCodes == ["CONFLICT"], "\(again)")

        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let accepted = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        #expect((accepted.body["results"] as? [[String: Any]])?.first?["participantStatus"] as? String == "ACCEPTED",
                "\(accepted)")
        let privately = try await guest.lookup(["cloudkit.zoneshare"], zoneID: theirs)
        #expect(privately.status == 200 && privately.recordCodes == ["ACCESS_DENIED"], "\(privately)")
        let sharedLookup = try await guest.post("records/lookup", ["zoneID": theirs,
                                                                   "records": [["recordName": "cloudkit.zoneshare"]]],
                                                database: "shared")
        let seen = try #require(sharedLookup.records.first)
        #expect(seen["shortGUID"] as? String == guid, "\(sharedLookup)")
        #expect((seen["currentUserParticipant"] as? [String: Any])?["acceptanceStatus"] as? String == "ACCEPTED")

        let stale = try await owner.modify([operation("update", zoneShareRecord([(guest.name, "READ_ONLY")],
                                                                              tag: "0"))], zoneID: zone)
        #expect(stale.recordCodes == ["CONFLICT"], "\(stale)")
        let tag = try #require(seen.tag)
        let updated = try await owner.modify([operation("update", zoneShareRecord([(guest.name, "READ_ONLY")],
                                                                                tag: tag))], zoneID: zone)
        #expect(updated.records.first?.shareParticipants[guest.name] == ["READ_ONLY", "ACCEPTED", "PRIVATE_USER"],
                "\(updated)")
        #expect(updated.records.first?["shortGUID"] as? String == guid)
        let write = try await guest.post("records/modify", [
            "zoneID": theirs, "operations": [operation("create", recordDictionary("g", fields: [:]))]],
            database: "shared")
        #expect(write.recordCodes == ["ACCESS_DENIED"] || write.code == "ACCESS_DENIED", "\(write)")

        let deleted = try await owner.modify([operation("forceDelete", ["recordName": "cloudkit.zoneshare"])],
                                             zoneID: zone)
        #expect(deleted.records.first?["deleted"] as? Bool == true, "\(deleted)")
        let gone = try await guest.post("zones/lookup", ["zones": [theirs]], database: "shared")
        #expect(gone.zones.first?.code == "ACCESS_DENIED", "\(gone)")
        let missing = try await owner.lookup(["cloudkit.zoneshare"], zoneID: zone)
        #expect(missing.recordCodes == ["NOT_FOUND"], "\(missing)")
    }

    @Test("refused: another user's zone, the shared database, the default zone, forRecord, bad keys",
          arguments: ConformanceBackend.allCases)
    func refused(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let zone = try await owner.makeZone()
        let other = try await backend.user()
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let foreign = try await other.modify([operation("create", zoneShareRecord([(other.name, "READ_WRITE")]))],
                                             zoneID: theirs)
        #expect(foreign.code == "ACCESS_DENIED" || foreign.recordCodes == ["ACCESS_DENIED"], "\(foreign)")
        let inShared = try await other.post("records/modify", [
            "zoneID": theirs, "operations": [operation("create", zoneShareRecord([]))]], database: "shared")
        #expect(inShared.status == 200 && inShared.recordCodes == ["ACCESS_DENIED"], "\(inShared)")
        let defaultZone = try await owner.modify([operation("create", zoneShareRecord([]))])
        #expect(defaultZone.recordCodes == ["BAD_REQUEST"], "\(defaultZone)")

        var forRecord = zoneShareRecord([])
        forRecord["forRecord"] = ["recordName": "root"]
        var badPermission = zoneShareRecord([(other.name, "ADMIN")])
        badPermission["publicPermission"] = "EVERYONE"
        let cases: [(String, [[String: Any]])] = [
            ("forRecord", [operation("create", forRecord)]),
            ("forRecord", [operation("create", zoneShareRecord([])),
                           operation("create", recordDictionary("n", fields: [:])), operation("create", forRecord)]),
            ("EVERYONE", [operation("create", badPermission)]),
            ("ADMIN", [operation("create", zoneShareRecord([(other.name, "ADMIN")]))]),
            ("named twice", [operation("create", zoneShareRecord([(other.name, "READ_ONLY"),
                                                                   (other.name, "READ_ONLY")]))]),
            ("lookupInfo", [operation("create", [
                "recordName": "cloudkit.zoneshare", "recordType": "cloudkit.share",
                "participants": [["userIdentity": ["lookupInfo": ["emailAddress": "x"]]]]])]),
            ("nickname", [operation("create", ["recordName": "cloudkit.zoneshare", "recordType": "cloudkit.share",
                                               "fields": ["nickname": value("t")]])]),
            ("BYTES", [operation("create", ["recordName": "cloudkit.zoneshare", "recordType": "cloudkit.share",
                                            "fields": ["cloudkit.thumbnailImageData": value(1)]])]),
        ]
        for (name, operations) in cases {
            let reply = try await owner.modify(operations, zoneID: zone)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST" && reply.reason.contains(name),
                    "\(name): \(reply)")
        }
        #expect(try await owner.fetch("n", zoneID: zone) == nil)
        #expect(try await owner.lookup(["cloudkit.zoneshare"], zoneID: zone).recordCodes == ["NOT_FOUND"])
    }

    @Test("a share's fields: cloudkit.title, thumbnailImageData, type kept and answered; update merges, replace resets",
          arguments: ConformanceBackend.allCases)
    func shareFields(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let zone = try await owner.makeZone()
        let guest = try await backend.user()
        let thumbnail = Data([0x89, 0x50, 0x4e, 0x47]).base64EncodedString()
        var zoneShare = zoneShareRecord([(guest.name, "READ_ONLY")])
        zoneShare["fields"] = ["cloudkit.title": value("Holiday"), "cloudkit.type": value("com.example.album"),
                               "cloudkit.thumbnailImageData": value(thumbnail, "BYTES")]
        let saved = try await owner.modify([operation("create", zoneShare)], zoneID: zone)
        let share = try #require(saved.records.first, "\(saved)")
        #expect(share.fieldNames == ["cloudkit.thumbnailImageData", "cloudkit.title", "cloudkit.type"], "\(share)")
        #expect(share.field("cloudkit.title") as? String == "Holiday")
        #expect(share.field("cloudkit.thumbnailImageData") as? String == thumbnail)
        #expect(share.fieldType("cloudkit.thumbnailImageData") == "BYTES")

        // update: the title changes, the type is cleared, the thumbnail stays.
        var update = zoneShareRecord([(guest.name, "READ_ONLY")], tag: share.tag)
        update["fields"] = ["cloudkit.title": value("Summer"), "cloudkit.type": ["value": NSNull()]]
        let updated = try #require(try await owner.modify([operation("update", update)], zoneID: zone).records.first)
        #expect(updated.fieldNames == ["cloudkit.thumbnailImageData", "cloudkit.title"], "\(updated)")
        #expect(updated.field("cloudkit.title") as? String == "Summer")
        let guid = try #require(updated["shortGUID"] as? String)
        _ = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let seen = try await guest.post("records/lookup", ["zoneID": theirs, "desiredKeys": ["cloudkit.title"],
                                                           "records": [["recordName": "cloudkit.zoneshare"]]],
                                        database: "shared")
        #expect(seen.records.first?.fieldNames == ["cloudkit.title"], "\(seen)")
        let fetched = try #require(try await owner.fetch("cloudkit.zoneshare", zoneID: zone))
        let replaced = try await owner.modify([operation("replace", zoneShareRecord([], tag: fetched.tag))],
                                              zoneID: zone)
        #expect(replaced.records.first?.fieldNames == [], "\(replaced)")

        // A record share keeps them as well, in its zone's feed too.
        let other = try await owner.makeZone("zone_d")
        var recordShareDictionary = recordShare("album-share", root: "album", [])
        recordShareDictionary["fields"] = ["cloudkit.title": value("Album")]
        let made = try await owner.modify([operation("create", recordDictionary("album", fields: [:])),
                                           operation("create", recordShareDictionary)], zoneID: other)
        #expect(made.records.last?.field("cloudkit.title") as? String == "Album", "\(made)")
        let feed = try await owner.post("changes/zone", ["zones": [["zoneID": other]]])
        let records = (feed.body["zones"] as? [[String: Any]])?.first?["records"] as? [[String: Any]] ?? []
        let inFeed = records.first { $0["recordName"] as? String == "album-share" }
        #expect(inFeed?.field("cloudkit.title") as? String == "Album", "\(feed)")

        // Wrong type, another field: BAD_REQUEST naming it, nothing of the request applied.
        var wrongType = recordShare("other-share", root: "album2", [])
        wrongType["fields"] = ["cloudkit.title": value(5)]
        let bad = try await owner.modify([operation("create", recordDictionary("album2", fields: [:])),
                                          operation("create", wrongType)], zoneID: other)
        #expect(bad.status == 400 && bad.code == "BAD_REQUEST" && bad.reason.contains("cloudkit.title"), "\(bad)")
        #expect(try await owner.fetch("album2", zoneID: other) == nil)
    }

    @Test("cloudkit.zoneshare mixed with records: applied with them, ATOMIC_ERROR both ways, answered in order",
          arguments: ConformanceBackend.allCases)
    func mixedAtomically(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let zone = try await owner.makeZone()
        let guest = try await backend.user()
        // The share fails (a stale tag on a share that does not exist): the records beside it are not applied.
        let staleShare = try await owner.modify([
            operation("create", recordDictionary("a", fields: ["n": value(1)])),
            operation("update", zoneShareRecord([(guest.name, "READ_ONLY")], tag: "7")),
            operation("create", recordDictionary("b", fields: [:])),
        ], zoneID: zone)
        #expect(staleShare.status == 200 && staleShare.recordCodes == ["ATOMIC_ERROR", "NOT_FOUND", "ATOMIC_ERROR"],
                "\(staleShare)")
        #expect(try await owner.fetch("a", zoneID: zone) == nil)
        // A record fails: the share beside it is not saved.
        let staleRecord = try await owner.modify([
            operation("create", zoneShareRecord([(guest.name, "READ_ONLY")])),
            operation("update", recordDictionary("missing", tag: "1", fields: [:])),
        ], zoneID: zone)
        #expect(staleRecord.recordCodes == ["ATOMIC_ERROR", "NOT_FOUND"], "\(staleRecord)")
        #expect(try await owner.lookup(["cloudkit.zoneshare"], zoneID: zone).recordCodes == ["NOT_FOUND"])
        // Non-atomic: each stands alone.
        let loose = try await owner.modify([
            operation("create", recordDictionary("c", fields: [:])),
            operation("delete", ["recordName": "cloudkit.zoneshare"]),
        ], zoneID: zone, ["atomic": false])
        #expect(loose.recordCodes == [nil, "NOT_FOUND"], "\(loose)")
        // All succeed: one request saves records and the share, each answered in its place.
        let mixed = try await owner.modify([
            operation("create", recordDictionary("a", fields: ["n": value(1)])),
            operation("create", zoneShareRecord([(guest.name, "READ_WRITE")])),
            operation("forceDelete", ["recordName": "c"]),
        ], zoneID: zone)
        #expect(mixed.status == 200 && mixed.recordCodes == [nil, nil, nil], "\(mixed)")
        #expect(mixed.records.count == 3 && mixed.records[1]["recordName"] as? String == "cloudkit.zoneshare")
        let guid = try #require(mixed.records[1]["shortGUID"] as? String)
        #expect(mixed.records[1].shareParticipants[guest.name]?[0] == "READ_WRITE", "\(mixed)")
        #expect(mixed.records[2]["deleted"] as? Bool == true)
        let accepted = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        #expect(accepted.status == 200, "\(accepted)")
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let seen = try await guest.post("records/lookup", ["zoneID": theirs, "records": [["recordName": "a"]]],
                                        database: "shared")
        #expect(seen.recordCodes == [nil], "\(seen)")
        // The share deleted with a record in one request, under its tag since the acceptance: the guest loses
        // the zone.
        let acceptedShare = (accepted.body["results"] as? [[String: Any]])?.first?["share"] as? [String: Any]
        let tag = try #require(acceptedShare?.tag)
        #expect(tag != mixed.records[1].tag)
        let both = try await owner.modify([
            operation("delete", ["recordName": "cloudkit.zoneshare", "recordChangeTag": tag]),
            operation("forceDelete", ["recordName": "a"]),
        ], zoneID: zone)
        #expect(both.recordCodes == [nil, nil], "\(both)")
        let gone = try await guest.post("zones/lookup", ["zones": [theirs]], database: "shared")
        #expect(gone.zones.first?.code == "ACCESS_DENIED", "\(gone)")
    }
}
