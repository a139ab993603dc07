// CloudKit Web Services Reference, "Fetching Records by Record Name (records/lookup)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/LookupRecords.html):
// the request keys, the Lookup Record Dictionary, the response.
import Foundation
import Testing

@Suite("CloudKit: Fetching Records by Record Name (records/lookup)")
struct LookupRecordsTests {
    private func setUp(_ backend: ConformanceBackend) async throws -> (ConformanceUser, [String: Any]) {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        _ = try await user.modify([operation("create", recordDictionary(
            "a", fields: ["x": value(1), "y": value(2.5), "z": value("s")])),
            operation("create", recordDictionary("b", fields: ["x": value(2)]))], zoneID: zone)
        return (user, zone)
    }

    @Test("found records as Record Dictionaries, missing ones as errors, in the request's order",
          arguments: ConformanceBackend.allCases)
    func lookup(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.lookup(["b", "missing", "a"], zoneID: zone)
        #expect(reply.status == 200 && reply.recordCodes == [nil, "NOT_FOUND", nil])
        #expect(reply.records.map { $0["recordName"] as? String } == ["b", "missing", "a"])
        #expect(reply.records[0].int("x") == 2 && reply.records[0].tag != nil)
        #expect((reply.records[1]["reason"] as? String)?.isEmpty == false && reply.records[1]["uuid"] is String)
    }

    @Test("zoneID: the request's zone; left out, the default zone", arguments: ConformanceBackend.allCases)
    func zone(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("home", fields: [:]))])
        #expect(try await user.lookup(["home"]).recordCodes == [nil])
        #expect(try await user.lookup(["a"]).recordCodes == ["NOT_FOUND"])
        #expect(try await user.lookup(["home"], zoneID: zone).recordCodes == ["NOT_FOUND"])
    }

    @Test("desiredKeys: the request's, overridden by a record's own", arguments: ConformanceBackend.allCases)
    func desiredKeys(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.post("records/lookup", [
            "zoneID": zone, "desiredKeys": ["x"],
            "records": [["recordName": "a"], ["recordName": "a2", "desiredKeys": ["z"]] as [String: Any]],
        ])
        #expect(reply.records.first?.fieldNames == ["x"])
        let own = try await user.post("records/lookup", ["zoneID": zone, "desiredKeys": ["x"],
                                                         "records": [["recordName": "a", "desiredKeys": ["y", "z"]]]])
        #expect(own.records.first?.fieldNames == ["y", "z"])
    }

    @Test("numbersAsStrings", arguments: ConformanceBackend.allCases)
    func numbersAsStrings(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.lookup(["a"], zoneID: zone, ["numbersAsStrings": true])
        let record = try #require(reply.records.first)
        #expect(record.field("x") as? String == "1" && record.field("y") as? String == "2.5")
        #expect(record.field("z") as? String == "s")
    }

    @Test("request keys: unknown ones, a missing records, a record without recordName are BAD_REQUEST",
          arguments: ConformanceBackend.allCases)
    func requestKeys(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let unknown = try await user.lookup(["a"], zoneID: zone, ["resultsLimit": 1])
        #expect(unknown.status == 400 && unknown.reason.contains("resultsLimit"))
        let missing = try await user.post("records/lookup", ["zoneID": zone])
        #expect(missing.status == 400 && missing.reason.contains("records"))
        let nameless = try await user.post("records/lookup", ["zoneID": zone, "records": [["desiredKeys": ["x"]]]])
        #expect(nameless.status == 400 && nameless.reason.contains("recordName"))
        let wrongType = try await user.lookup(["a"], zoneID: zone, ["numbersAsStrings": "yes"])
        #expect(wrongType.status == 400 && wrongType.reason.contains("numbersAsStrings"))
    }
}
