// CloudKit Web Services Reference, "Types and Dictionaries" → Reference Dictionary, `action`
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
// DELETE_SELF "deletes a source record when the target record is deleted"; VALIDATE "deletes a
// target record only after all source records are deleted" and "verifies that the target record
// exists before creating this type of reference" (VALIDATING_REFERENCE_ERROR, Error Codes).
import Foundation
import Testing

@Suite("CloudKit: Reference Dictionary actions")
struct ReferenceDictionaryTests {
    private func setUp(_ backend: ConformanceBackend) async throws -> (ConformanceUser, [String: Any]) {
        let user = try await backend.user()
        return (user, try await user.makeZone())
    }

    private func referring(_ name: String, to target: String, _ action: String) -> [String: Any] {
        operation("create", recordDictionary(name, fields: ["to": value(["recordName": target, "action": action],
                                                                        "REFERENCE")]))
    }

    @Test("DELETE_SELF: deleting the target deletes the source, down a chain; the feed reports them deleted",
          arguments: ConformanceBackend.allCases)
    func deleteSelfCascades(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("a", fields: [:])),
                                   referring("b", to: "a", "DELETE_SELF"), referring("c", to: "b", "DELETE_SELF"),
                                   referring("kept", to: "a", "NONE")], zoneID: zone)
        let token = try #require(try await user.post("changes/zone", ["zones": [["zoneID": zone]]])
            .zones.first?["syncToken"] as? String)
        let reply = try await user.modify([operation("delete", ["recordName": "a"])], zoneID: zone)
        // Only the operation asked for is answered (CloudKit does not name the records it deletes along).
        #expect(reply.recordCodes == [nil] && reply.records.count == 1)
        #expect(try await user.lookup(["a", "b", "c", "kept"], zoneID: zone).recordCodes
                == ["NOT_FOUND", "NOT_FOUND", "NOT_FOUND", nil])
        let records = try #require(try await user.post("changes/zone", ["zones": [["zoneID": zone,
                                                                                  "syncToken": token]]])
            .zones.first?["records"] as? [[String: Any]])
        #expect(Set(records.filter { $0["deleted"] as? Bool == true }.compactMap { $0["recordName"] as? String })
                == ["a", "b", "c"])
    }

    @Test("VALIDATE: the target must exist (VALIDATING_REFERENCE_ERROR); one created earlier in the request does",
          arguments: ConformanceBackend.allCases)
    func validateNeedsTarget(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let missing = try await user.modify([referring("s", to: "nobody", "VALIDATE")], zoneID: zone)
        #expect(missing.status == 200 && missing.recordCodes == ["VALIDATING_REFERENCE_ERROR"])
        #expect(try await user.fetch("s", zoneID: zone) == nil)
        let together = try await user.modify([operation("create", recordDictionary("t", fields: [:])),
                                              referring("s", to: "t", "VALIDATE")], zoneID: zone)
        #expect(together.recordCodes == [nil, nil])
    }

    @Test("VALIDATE: a target referred to cannot be deleted until its sources are; then it can",
          arguments: ConformanceBackend.allCases)
    func validateBlocksDelete(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("t", fields: [:])),
                                   referring("s", to: "t", "VALIDATE")], zoneID: zone)
        let blocked = try await user.modify([operation("forceDelete", ["recordName": "t"])], zoneID: zone)
        #expect(blocked.recordCodes == ["VALIDATING_REFERENCE_ERROR"])
        #expect(try await user.fetch("t", zoneID: zone) != nil)
        let inOrder = try await user.modify([operation("forceDelete", ["recordName": "s"]),
                                             operation("forceDelete", ["recordName": "t"])], zoneID: zone)
        #expect(inOrder.recordCodes == [nil, nil])
    }

    @Test("a cascade that would delete a record still validated by another fails whole",
          arguments: ConformanceBackend.allCases)
    func cascadeBlockedByValidate(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("a", fields: [:])),
                                   referring("b", to: "a", "DELETE_SELF"), referring("v", to: "b", "VALIDATE")],
                                  zoneID: zone)
        let reply = try await user.modify([operation("forceDelete", ["recordName": "a"])], zoneID: zone)
        #expect(reply.recordCodes == ["VALIDATING_REFERENCE_ERROR"])
        #expect(try await user.lookup(["a", "b", "v"], zoneID: zone).recordCodes == [nil, nil, nil])
    }

    @Test("an update that drops the reference frees the target", arguments: ConformanceBackend.allCases)
    func droppedReference(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary("t", fields: [:])),
                                          referring("s", to: "t", "VALIDATE")], zoneID: zone)
        _ = try await user.modify([operation("replace", recordDictionary("s", tag: made.records.last?.tag,
                                                                         fields: ["v": value(1)]))], zoneID: zone)
        let freed = try await user.modify([operation("forceDelete", ["recordName": "t"])], zoneID: zone)
        #expect(freed.recordCodes == [nil])
        #expect(try await user.fetch("s", zoneID: zone) != nil)
    }

    @Test("a reference with an action names a record of its own zone", arguments: ConformanceBackend.allCases)
    func sameZone(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.makeZone("zone_other")
        let reply = try await user.modify([operation("create", recordDictionary("s", fields: [
            "to": value(["recordName": "t", "zoneID": ["zoneName": "zone_other"], "action": "DELETE_SELF"],
                        "REFERENCE")]))], zoneID: zone)
        #expect(reply.recordCodes == ["BAD_REQUEST"])
        let none = try await user.modify([operation("create", recordDictionary("s", fields: [
            "to": value(["recordName": "t", "zoneID": ["zoneName": "zone_other"], "action": "NONE"], "REFERENCE")]))],
            zoneID: zone)
        #expect(none.recordCodes == [nil])
    }
}
