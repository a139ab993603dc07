// CloudKit Web Services Reference, "Error Codes"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ErrorCodes.html):
// each code with its HTTP status, and the error dictionary (ModifyRecords → Record Fetch Error
// Dictionary: `serverErrorCode`, `reason`, `uuid`, `recordName`).
import Foundation
import Testing

@Suite("CloudKit: Error Codes")
struct ErrorCodesTests {
    @Test("an operation not served, a path not known: 404 NOT_FOUND", arguments: ConformanceBackend.allCases)
    func notFound(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let op = try await user.post("records/frobnicate", [:])
        #expect(op.status == 404 && op.code == "NOT_FOUND" && op.reason.contains("records/frobnicate"))
        let path = try await user.server.request("POST", "/database/2/c/e/private/records/lookup",
                                                 headers: [("Authorization", "Bearer \(user.token)")], body: [],
                                                 write: false)
        #expect(path.status == 404 && path.code == "NOT_FOUND")
    }

    @Test("no credentials: 421 AUTHENTICATION_REQUIRED; unknown ones: 401 AUTHENTICATION_FAILED",
          arguments: ConformanceBackend.allCases)
    func authentication(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let none = try await user.server.request("POST", "\(ConformanceUser.container)/private/records/lookup",
                                                 headers: [], body: Array("{}".utf8), write: false)
        #expect(none.status == 421 && none.code == "AUTHENTICATION_REQUIRED")
        let wrong = try await user.send("records/lookup", Array("{}".utf8), authorization: "Bearer not-a-token")
        #expect(wrong.status == 401 && wrong.code == "AUTHENTICATION_FAILED")
    }

    @Test("a request error: status and code by the table; serverErrorCode, reason and uuid in the body",
          arguments: ConformanceBackend.allCases)
    func requestError(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let reply = try await user.send("records/modify", Array("{not json".utf8))
        #expect(reply.status == 400 && reply.code == "BAD_REQUEST")
        #expect(!reply.reason.isEmpty && UUID(uuidString: reply.body["uuid"] as? String ?? "") != nil)
        // Our addition: the CloudKit framework's name for the kind.
        #expect(reply.body["ckErrorCode"] as? String == "invalidArguments")
    }

    @Test("per-record errors come in a 200 answer: ZONE_NOT_FOUND, ACCESS_DENIED, NOT_FOUND, CONFLICT",
          arguments: ConformanceBackend.allCases)
    func recordErrors(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let other = try await backend.user()
        _ = try await user.modify([operation("create", recordDictionary("n", fields: [:]))], zoneID: zone)
        let missingZone = try await user.modify([operation("create", recordDictionary("n", fields: [:]))],
                                                zoneID: ["zoneName": "zone_none"])
        #expect(missingZone.status == 200 && missingZone.recordCodes == ["ZONE_NOT_FOUND"])
        let theirs = try await other.modify([operation("create", recordDictionary("x", fields: [:]))],
                                            zoneID: ["zoneName": "zone_c", "ownerRecordName": user.name])
        #expect(theirs.recordCodes == ["ACCESS_DENIED"])
        let reply = try await user.modify([operation("forceDelete", ["recordName": "gone"]),
                                           operation("create", recordDictionary("n", fields: [:]))],
                                          zoneID: zone, ["atomic": false])
        #expect(reply.recordCodes == ["NOT_FOUND", "CONFLICT"])
        let failed = try #require(reply.records.first)
        #expect(failed["recordName"] as? String == "gone" && failed["reason"] is String && failed["uuid"] is String)
    }

    @Test("a database other than public, private and shared is 404 NOT_FOUND", arguments: ConformanceBackend.allCases)
    func unknownDatabase(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let reply = try await user.post("records/lookup", ["records": [["recordName": "x"]]], database: "publik")
        #expect(reply.status == 404 && reply.code == "NOT_FOUND", "\(reply)")
    }
}
