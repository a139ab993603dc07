// CloudKit Web Services Reference, "Types and Dictionaries" → Record Dictionary (`parent`, `share`,
// Share Request Keys `forRecord`, `publicPermission`, `participants`), with "Modifying Records",
// "Fetching Records by Record Name", "Fetching Records Using a Query", "Fetching Record Zone
// Changes" and "Fetching Record Information (records/resolve)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html, …): a record
// share shares its root record and the records below it by `parent`, and nothing else.
import Foundation
import RecordStore
import StoreServer
import Testing

/// A record share for `root`, as a records/modify operation sends it.
func recordShare(_ name: String, root: String?, _ participants: [(String, String)],
                 publicPermission: String? = nil, tag: String? = nil) -> [String: Any] {
    var o = zoneShareRecord(participants, publicPermission: publicPermission, tag: tag)
    o["recordName"] = name
    if let root { o["forRecord"] = ["recordName": root] }
    return o
}

/// A record of type Note hanging from `parent`.
func child(_ name: String, parent: String?) -> [String: Any] {
    var o = recordDictionary(name, fields: ["title": value(name)])
    if let parent { o["parent"] = ["recordName": parent] }
    return o
}

@Suite("CloudKit: Types and Dictionaries — record shares (parent, share, forRecord)")
struct RecordDictionaryShareTests {
    /// The owner's zone with `album` ← `photo` ← `comment` and an unrelated `other`, and the share
    /// `album-share` for `album` naming `guest` — all saved in one request, the share beside the
    /// records. Returns the share's short GUID.
    private func sharedAlbum(_ owner: ConformanceUser, guest: ConformanceUser, permission: String,
                             zone: [String: Any]) async throws -> String {
        let saved = try await owner.modify([
            operation("create", child("album", parent: nil)),
            operation("create", recordShare("album-share", root: "album", [(guest.name, permission)])),
            operation("create", child("photo", parent: "album")),
            operation("create", child("comment", parent: "photo")),
            operation("create", child("other", parent: nil)),
        ], zoneID: zone)
        #expect(saved.status == 200 && saved.recordCodes == [nil, nil, nil, nil, nil], "\(saved)")
        // The root as it now stands: its share set, under the change tag that saved it.
        #expect((saved.records.first?["share"] as? [String: Any])?["recordName"] as? String == "album-share",
                "\(saved)")
        let share = try #require(saved.records.dropFirst().first)
        #expect(share["recordType"] as? String == "cloudkit.share" && share["fields"] as? [String: Any] != nil)
        #expect(share.shareParticipants[guest.name] == [permission, "PENDING", "PRIVATE_USER"], "\(share)")
        return try #require(share["shortGUID"] as? String)
    }

    @Test("a record share: saved beside its records, the root's share set, a participant sees the hierarchy only",
          arguments: ConformanceBackend.allCases)
    func hierarchy(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let zone = try await owner.makeZone()
        let guid = try await sharedAlbum(owner, guest: guest, permission: "READ_ONLY", zone: zone)
        let root = try #require(try await owner.fetch("album", zoneID: zone))
        #expect((root["share"] as? [String: Any])?["recordName"] as? String == "album-share", "\(root)")
        let touched = try await owner.modify([operation("update", [
            "recordName": "album", "recordChangeTag": root.tag ?? "", "fields": ["title": value("Summer")]])],
            zoneID: zone)
        #expect(touched.recordCodes == [nil] && (touched.records.first?["share"] as? [String: Any]) != nil,
                "an update keeps the share: \(touched)")

        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let before = try await guest.post("records/lookup", ["zoneID": theirs, "records": [["recordName": "album"]]],
                                          database: "shared")
        #expect(before.recordCodes == ["ACCESS_DENIED"], "not accepted yet: \(before)")
        let resolved = try await guest.post("records/resolve", [
            "shortGUIDs": [["value": guid, "shouldFetchRootRecord": true]]], database: "shared")
        let result = try #require((resolved.body["results"] as? [[String: Any]])?.first, "\(resolved)")
        #expect(result["participantStatus"] as? String == "PENDING" && result["participantType"] as? String
                    == "PRIVATE_USER", "\(result)")
        #expect((result["rootRecord"] as? [String: Any])?["recordName"] as? String == "album", "\(result)")
        let accepted = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        #expect((accepted.body["results"] as? [[String: Any]])?.first?["participantStatus"] as? String == "ACCEPTED",
                "\(accepted)")

        let lookup = try await guest.post("records/lookup", [
            "zoneID": theirs, "records": ["album", "photo", "comment", "other", "album-share"].map {
                ["recordName": $0] }], database: "shared")
        #expect(lookup.recordCodes == [nil, nil, nil, "NOT_FOUND", nil], "\(lookup)")
        #expect(lookup.records.last?.shareParticipants[guest.name] == ["READ_ONLY", "ACCEPTED", "PRIVATE_USER"])
        let query = try await guest.post("records/query", ["zoneID": theirs, "query": ["recordType": "Note"]],
                                         database: "shared")
        #expect(query.records.compactMap { $0["recordName"] as? String }.sorted() == ["album", "comment", "photo"],
                "\(query)")
        let changes = try await guest.post("changes/zone", ["zones": [["zoneID": theirs]]], database: "shared")
        let changed = (changes.zones.first?["records"] as? [[String: Any]] ?? []).compactMap {
            $0["recordName"] as? String }
        #expect(changed.sorted() == ["album", "album-share", "comment", "photo"], "\(changes)")
        let zones = try await guest.post("zones/list", [:], database: "shared")
        #expect(zones.zones.compactMap { ($0["zoneID"] as? [String: Any])?["ownerRecordName"] as? String }
                    == [owner.name], "\(zones)")
        let write = try await guest.post("records/modify", [
            "zoneID": theirs, "operations": [operation("create", child("mine", parent: "album"))]],
            database: "shared")
        #expect(write.recordCodes == ["ACCESS_DENIED"], "read-only: \(write)")

        let ownerShares = try await owner.post("records/query", ["zoneID": zone,
                                                                 "query": ["recordType": "cloudkit.share"]])
        #expect(ownerShares.records.first?["shortGUID"] as? String == guid, "\(ownerShares)")
        let ownerChanges = try await owner.post("changes/zone", ["zones": [["zoneID": zone]]])
        let ownerShare = (ownerChanges.zones.first?["records"] as? [[String: Any]])?.first {
            $0["recordName"] as? String == "album-share" }
        #expect(ownerShare?["publicPermission"] as? String == "NONE" && ownerShare?.fieldNames == [], "\(ownerChanges)")
    }

    @Test("changes/zone: a participant hears of deletions in their hierarchy only, the owner of all",
          arguments: ConformanceBackend.allCases)
    func deletionsByHierarchy(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let zone = try await owner.makeZone()
        let guid = try await sharedAlbum(owner, guest: guest, permission: "READ_ONLY", zone: zone)
        _ = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        func deleted(_ user: ConformanceUser, _ zoneID: [String: Any], since token: String?,
                     database: String) async throws -> (names: [String], token: String?) {
            var request: [String: Any] = ["zoneID": zoneID]
            if let token { request["syncToken"] = token }
            let reply = try await user.post("changes/zone", ["zones": [request]], database: database)
            let result = try #require(reply.zones.first, "\(reply)")
            let records = result["records"] as? [[String: Any]] ?? []
            let names = records.filter { $0["deleted"] as? Bool == true }.compactMap { $0["recordName"] as? String }
            return (names.sorted(), result["syncToken"] as? String)
        }
        let guestToken = try await deleted(guest, theirs, since: nil, database: "shared").token
        let ownerToken = try await deleted(owner, zone, since: nil, database: "private").token
        // The parent before its child, and a record outside the hierarchy, in one request.
        let gone = try await owner.modify(["photo", "comment", "other"].map {
            operation("forceDelete", ["recordName": $0]) }, zoneID: zone)
        #expect(gone.recordCodes == [nil, nil, nil], "\(gone)")
        #expect(try await deleted(guest, theirs, since: guestToken, database: "shared").names == ["comment", "photo"])
        #expect(try await deleted(owner, zone, since: ownerToken, database: "private").names
                    == ["comment", "other", "photo"])
    }

    @Test("a read-write participant writes inside the hierarchy only; the owner's share rules",
          arguments: ConformanceBackend.allCases)
    func writesAndRules(_ backend: ConformanceBackend) async throws {
        let owner = try await backend.user()
        let guest = try await backend.user()
        let zone = try await owner.makeZone()
        let guid = try await sharedAlbum(owner, guest: guest, permission: "READ_WRITE", zone: zone)
        _ = try await guest.post("records/accept", ["shortGUIDs": [["value": guid]]], database: "shared")
        let theirs: [String: Any] = ["zoneName": "zone_c", "ownerRecordName": owner.name]
        let writes = try await guest.post("records/modify", ["zoneID": theirs, "atomic": false, "operations": [
            operation("create", child("reply", parent: "comment")),
            operation("create", child("loose", parent: nil)),
            operation("forceUpdate", child("other", parent: nil)),
            operation("forceDelete", ["recordName": "album"]),
            operation("forceDelete", ["recordName": "photo"]),
            operation("forceUpdate", recordShare("album-share", root: nil, [])),
        ]], database: "shared")
        #expect(writes.recordCodes == [nil, "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", nil, "ACCESS_DENIED"],
                "\(writes)")

        let rules = try await owner.modify([
            operation("create", recordShare("second", root: "album", [])),
            operation("create", recordShare("nowhere", root: "missing", [])),
        ], zoneID: zone, ["atomic": false])
        #expect(rules.recordCodes == ["BAD_REQUEST", "NOT_FOUND"], "\(rules)")
        let noRoot = try await owner.modify([operation("create", recordShare("s", root: nil, []))], zoneID: zone)
        #expect(noRoot.status == 400 && noRoot.reason.contains("forRecord"), "\(noRoot)")
        _ = try await owner.modify([operation("create", child("d", parent: nil))])
        let defaultZone = try await owner.modify([operation("create", recordShare("s", root: "d", []))])
        #expect(defaultZone.recordCodes == ["BAD_REQUEST"], "\(defaultZone)")

        let share = try #require(try await owner.fetch("album-share", zoneID: zone))
        let removed = try await owner.modify([operation("update", recordShare("album-share", root: nil, [],
                                                                             tag: share.tag))], zoneID: zone)
        #expect(removed.recordCodes == [nil] && removed.records.first?["shortGUID"] as? String == guid, "\(removed)")
        let gone = try await guest.post("records/lookup", ["zoneID": theirs, "records": [["recordName": "album"]]],
                                        database: "shared")
        #expect(gone.recordCodes == ["ACCESS_DENIED"], "\(gone)")
        let deleted = try await owner.modify([operation("forceDelete", ["recordName": "album-share",
                                                                        "recordType": "cloudkit.share"])],
                                             zoneID: zone)
        #expect(deleted.records.first?["deleted"] as? Bool == true, "\(deleted)")
        #expect(try await owner.fetch("album", zoneID: zone)?["share"] == nil)
    }

    @Test("GET on a share's url: a page leading to sign-in and records/accept; a path that is no short GUID: 404")
    func shareURL() async throws {
        let store = try EmbeddedStore(options: .inMemoryForTests)
        defer { store.close() }
        let api = StoreAPI(store: store, users: try UserRegistry(directory: nil), allowRegister: false)
        let guid = ZoneShare.newShortGUID()
        func get(_ path: String, method: String = "GET") async -> HTTPResponse? {
            let outcome = await api.handle(HTTPRequest(method: method, target: path))
            guard case .response(let r) = outcome else { return nil }
            return r
        }
        let page = try #require(await get("/share/\(guid)"))
        let text = String(decoding: page.body, as: UTF8.self)
        #expect(page.status == 200 && page.headers["Content-Type"]?.hasPrefix("text/html") == true, "\(page)")
        #expect(text.contains(guid) && text.contains("/auth/signin?redirect=/share/\(guid)")
                    && text.contains("records/") && text.contains("accept"))
        #expect(await get("/share/\(guid.dropLast())X")?.status == 404)
        #expect(await get("/share/<script>")?.status == 404)
        #expect(await get("/share/\(guid)", method: "POST")?.status == 405)
    }
}
