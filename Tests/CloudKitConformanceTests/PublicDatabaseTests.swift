// The public database, as CloudKit Web Services Reference has it: `public` is a `database` of
// "Modifying Records (records/modify)", "Fetching Records by Record Name (records/lookup)" and
// "Fetching Records Using a Query (records/query)" (ModifyRecords.html, LookupRecords.html,
// QueryingRecords.html), not of "Fetching Record Zone Changes" and "Fetching Database Changes";
// "Composing Web Service Requests" (SettingUpWebServices.html): an API token without a web auth
// token reads it. Its records are world readable and writable by their creator alone (CloudKit's
// default security roles); it has its default zone only.
import Foundation
import StoreServer
import Testing

@Suite("CloudKit: the public database (records/modify, records/lookup, records/query)")
struct PublicDatabaseTests {
    /// The public zone as the server answers it.
    static var publicZone: [String: Any] { ["zoneName": "_defaultZone", "ownerRecordName": "__defaultOwner__"] }

    @Test("a record one user creates is read by another and by the anonymous reader, through lookup and query",
          arguments: ConformanceBackend.allCases)
    func readableByAll(_ backend: ConformanceBackend) async throws {
        let author = try await backend.user()
        let reader = try await backend.user()
        let name = "pub-\(author.name)"
        let saved = try await author.post("records/modify", ["operations": [
            operation("create", recordDictionary(name, type: "Board", fields: ["by": value(author.name)]))]],
            database: "public")
        #expect(saved.status == 200 && saved.recordCodes == [nil], "\(saved)")
        #expect((saved.records.first?["zoneID"] as? [String: Any])?["ownerRecordName"] as? String
                == "__defaultOwner__", "\(saved)")

        let looked = try await reader.post("records/lookup", ["records": [["recordName": name]]], database: "public")
        #expect(looked.recordCodes == [nil] && looked.records.first?.field("by") as? String == author.name, "\(looked)")
        let created = looked.records.first?["created"] as? [String: Any]
        #expect(created?["userRecordName"] as? String == author.name, "\(looked)")

        let query: [String: Any] = ["query": ["recordType": "Board", "filterBy": [
            ["comparator": "EQUALS", "fieldName": "by", "fieldValue": value(author.name)]]]]
        for body in [query, query.merging(["zoneWide": true]) { $1 },
                     query.merging(["zoneID": ["zoneName": "_defaultZone"]]) { $1 },
                     query.merging(["zoneID": Self.publicZone]) { $1 }] {
            let anonymous = try await backend.anonymous("records/query", body)
            #expect(anonymous.status == 200 && anonymous.records.map { $0["recordName"] as? String } == [name],
                    "\(anonymous)")
        }
        let anonymousLookup = try await backend.anonymous("records/lookup", ["records": [["recordName": name]]])
        #expect(anonymousLookup.recordCodes == [nil], "\(anonymousLookup)")

        // The private databases are apart: the record is in neither user's.
        let privately = try await author.post("records/lookup", ["records": [["recordName": name]]])
        #expect(privately.recordCodes == ["NOT_FOUND"], "\(privately)")
    }

    @Test("only a record's creator updates, replaces or deletes it; others get ACCESS_DENIED, nothing changes",
          arguments: ConformanceBackend.allCases)
    func writableByCreator(_ backend: ConformanceBackend) async throws {
        let author = try await backend.user()
        let other = try await backend.user()
        let name = "mine-\(author.name)"
        let saved = try await author.post("records/modify", ["operations": [
            operation("create", recordDictionary(name, fields: ["n": value(1)]))]], database: "public")
        let tag = try #require(saved.records.first?.tag, "\(saved)")

        for type in ["update", "forceUpdate", "replace", "forceReplace", "delete", "forceDelete"] {
            let attempt = try await other.post("records/modify", ["operations": [
                operation(type, recordDictionary(name, tag: tag, fields: ["n": value(2)]))]], database: "public")
            #expect(attempt.status == 200 && attempt.recordCodes == ["ACCESS_DENIED"], "\(type): \(attempt)")
        }
        let unchanged = try await other.post("records/lookup", ["records": [["recordName": name]]], database: "public")
        #expect(unchanged.records.first?.int("n") == 1 && unchanged.records.first?.tag == tag, "\(unchanged)")

        // Anyone signed in creates records of their own beside it; the creator changes theirs.
        let theirs = try await other.post("records/modify", ["operations": [
            operation("create", recordDictionary("theirs-\(other.name)", fields: ["n": value(3)]))]],
            database: "public")
        #expect(theirs.recordCodes == [nil], "\(theirs)")
        let updated = try await author.post("records/modify", ["operations": [
            operation("update", recordDictionary(name, tag: tag, fields: ["n": value(4)]))]], database: "public")
        #expect(updated.recordCodes == [nil] && updated.records.first?.int("n") == 4, "\(updated)")
        let deleted = try await author.post("records/modify", ["operations": [
            operation("forceDelete", ["recordName": name])]], database: "public")
        #expect(deleted.records.first?["deleted"] as? Bool == true, "\(deleted)")
    }

    @Test("the anonymous reader may not write, nor reach the private or shared database: AUTHENTICATION_REQUIRED",
          arguments: ConformanceBackend.allCases)
    func anonymousIsReadOnly(_ backend: ConformanceBackend) async throws {
        let create: [String: Any] = ["operations": [operation("create", recordDictionary("anon", fields: [:]))]]
        let cases: [(String, [String: Any], String)] = [
            ("records/modify", create, "public"),
            ("zones/modify", ["operations": []], "public"),
            ("subscriptions/modify", ["operations": []], "public"),
            ("records/lookup", ["records": [["recordName": "anon"]]], "private"),
            ("records/query", ["query": ["recordType": "Note"], "zoneWide": true], "private"),
            ("zones/list", [:], "shared"),
        ]
        for (op, body, database) in cases {
            let reply = try await backend.anonymous(op, body, database: database)
            #expect(reply.status == 421 && reply.code == "AUTHENTICATION_REQUIRED", "\(database) \(op): \(reply)")
        }
        // Without an API token a request that names no user is refused as before.
        let bare = try await backend.server().request(
            "POST", "\(ConformanceUser.container)/public/records/lookup", headers: [],
            body: Array(#"{"records":[]}"#.utf8), write: false)
        #expect(bare.status == 421, "\(bare)")
    }

    @Test("the default zone is the only zone: records elsewhere ZONE_NOT_FOUND, zones/modify BAD_REQUEST",
          arguments: ConformanceBackend.allCases)
    func defaultZoneOnly(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let elsewhere = try await user.post("records/modify", [
            "zoneID": ["zoneName": "custom"],
            "operations": [operation("create", recordDictionary("x", fields: [:]))]], database: "public")
        #expect(elsewhere.recordCodes == ["ZONE_NOT_FOUND"], "\(elsewhere)")
        let someonesDefault = try await user.post("records/lookup", [
            "zoneID": ["zoneName": "_defaultZone", "ownerRecordName": user.name],
            "records": [["recordName": "x"]]], database: "public")
        #expect(someonesDefault.recordCodes == ["ZONE_NOT_FOUND"], "\(someonesDefault)")
        let zone = try await user.post("zones/modify", ["operations": [
            ["operationType": "create", "zone": ["zoneID": ["zoneName": "custom"]]]]], database: "public")
        #expect(zone.zones.first?.code == "BAD_REQUEST", "\(zone)")
        let listed = try await backend.anonymous("zones/list", [:])
        #expect(listed.zones.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
                == ["_defaultZone"], "\(listed)")
        let looked = try await backend.anonymous("zones/lookup", ["zones": [["zoneName": "_defaultZone"]]])
        #expect(looked.zones.first?.code == nil && looked.zones.first?["atomic"] as? Bool == false, "\(looked)")
    }

    @Test("changes/zone and changes/database are not served in the public database: BAD_REQUEST",
          arguments: ConformanceBackend.allCases)
    func noChangeFeeds(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.post("changes/zone", ["zones": [["zoneID": ["zoneName": "_defaultZone"]]]],
                                       database: "public")
        #expect(zone.status == 400 && zone.code == "BAD_REQUEST" && zone.reason.contains("public"), "\(zone)")
        let database = try await user.post("changes/database", [:], database: "public")
        #expect(database.status == 400 && database.code == "BAD_REQUEST", "\(database)")
    }
}

extension ConformanceBackend {
    /// A request of the anonymous reader: an API token and no user.
    func anonymous(_ operation: String, _ body: [String: Any], database: String = "public") async throws -> Reply {
        let path = "\(ConformanceUser.container)/\(database)/\(operation)?ckAPIToken=\(ConformanceUser.apiToken)"
        return try await server().request("POST", path, headers: [("Content-Type", "text/plain")],
                                          body: WireFormat.serialize(body), write: false)
    }
}
