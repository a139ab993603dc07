// CloudKit Web Services Reference, "Modifying Records (records/modify)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html):
// the request keys, the Record Operation Dictionary, the Operation Type Values, the response and
// the Record Fetch Error Dictionary.
import Foundation
import Testing

@Suite("CloudKit: Modifying Records (records/modify)")
struct ModifyRecordsTests {
    private func setUp(_ backend: ConformanceBackend) async throws -> (ConformanceUser, [String: Any]) {
        let user = try await backend.user()
        return (user, try await user.makeZone())
    }

    @Test("create: 200 with the Record Dictionary of the saved record", arguments: ConformanceBackend.allCases)
    func create(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.modify([operation("create", recordDictionary(
            "Mei Chen", type: "Artist", fields: ["firstName": value("Mei"), "lastName": value("Chen", "STRING")]))],
            zoneID: zone)
        #expect(reply.status == 200)
        let record = try #require(reply.records.first)
        #expect(record["recordName"] as? String == "Mei Chen" && record["recordType"] as? String == "Artist")
        #expect(record.tag?.isEmpty == false)
        #expect(record.field("firstName") as? String == "Mei" && record.fieldType("firstName") == "STRING")
        let created = try #require(record["created"] as? [String: Any])
        #expect(created["userRecordName"] as? String == user.name && created["deviceID"] as? String == user.device)
        #expect(integer(created["timestamp"]) != nil && record["modified"] != nil)
        #expect((record["zoneID"] as? [String: Any])?["zoneName"] as? String == "zone_c")
    }

    @Test("create without recordName: the server names the record", arguments: ConformanceBackend.allCases)
    func createAssignsAName(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.modify([operation("create", recordDictionary(nil, fields: ["v": value(1)]))],
                                          zoneID: zone)
        let name = try #require(reply.records.first?["recordName"] as? String)
        #expect(UUID(uuidString: name) != nil)
        #expect(try await user.fetch(name, zoneID: zone)?.int("v") == 1)
    }

    @Test("create of a name that exists: CONFLICT with the server's record; nothing changes",
          arguments: ConformanceBackend.allCases)
    func createExisting(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("n", fields: ["v": value(1)]))], zoneID: zone)
        let reply = try await user.modify([operation("create", recordDictionary("n", fields: ["v": value(2)]))],
                                          zoneID: zone)
        #expect(reply.status == 200 && reply.recordCodes == ["CONFLICT"])
        let failed = try #require(reply.records.first)
        #expect(failed["recordName"] as? String == "n" && (failed["reason"] as? String)?.isEmpty == false)
        #expect(((failed["serverRecord"] as? [String: Any])?["fields"] as? [String: Any]) != nil)
        #expect(try await user.fetch("n", zoneID: zone)?.int("v") == 1)
    }

    @Test("update changes only the fields sent, when the tag is the server's", arguments: ConformanceBackend.allCases)
    func updateMerges(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary(
            "101", type: "Artwork", fields: ["title": value("Dawn"), "width": value(10), "height": value(20)]))],
            zoneID: zone)
        let tag = try #require(made.records.first?.tag)
        // The reference's own example: no recordType, the two fields, the tag.
        let reply = try await user.modify([operation("update", ["recordName": "101", "recordChangeTag": tag,
                                                                "fields": ["width": value(18), "height": value(24)]])],
                                          zoneID: zone)
        let updated = try #require(reply.records.first)
        #expect(updated.code == nil && updated.tag != tag && updated["recordType"] as? String == "Artwork")
        #expect(updated.fieldNames == ["height", "title", "width"])
        #expect(updated.field("title") as? String == "Dawn" && updated.int("width") == 18)
    }

    @Test("update with a stale tag: CONFLICT with the server's record; nothing changes",
          arguments: ConformanceBackend.allCases)
    func updateStale(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary("n", fields: ["v": value(1)]))],
                                         zoneID: zone)
        let stale = try #require(made.records.first?.tag)
        _ = try await user.modify([operation("update", recordDictionary("n", tag: stale, fields: ["v": value(2)]))],
                                  zoneID: zone)
        let reply = try await user.modify([operation("update", recordDictionary(
            "n", tag: stale, fields: ["w": value(3)]))], zoneID: zone)
        #expect(reply.recordCodes == ["CONFLICT"])
        let server = try #require(reply.records.first?["serverRecord"] as? [String: Any])
        #expect(server.int("v") == 2 && server.tag != stale)
        #expect(try await user.fetch("n", zoneID: zone)?.fieldNames == ["v"])
    }

    @Test("update needs the record's tag and the record: BAD_REQUEST without a tag, NOT_FOUND when missing",
          arguments: ConformanceBackend.allCases)
    func updateNeedsTagAndRecord(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("n", fields: ["v": value(1)]))], zoneID: zone)
        let untagged = try await user.modify([operation("update", recordDictionary("n", fields: ["v": value(2)]))],
                                             zoneID: zone)
        #expect(untagged.recordCodes == ["BAD_REQUEST"] && (untagged.records.first?["reason"] as? String ?? "")
            .contains("recordChangeTag"))
        let missing = try await user.modify([operation("update", recordDictionary("gone", tag: "1",
                                                                                  fields: ["v": value(2)]))],
                                            zoneID: zone)
        #expect(missing.recordCodes == ["NOT_FOUND"])
    }

    @Test("update: a field sent as null is cleared", arguments: ConformanceBackend.allCases)
    func updateClearsNull(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary(
            "n", fields: ["a": value(1), "b": value(2)]))], zoneID: zone)
        let tag = try #require(made.records.first?.tag)
        let reply = try await user.modify([operation("update", recordDictionary(
            "n", tag: tag, fields: ["a": ["value": NSNull()], "c": value(3)]))], zoneID: zone)
        #expect(reply.records.first?.fieldNames == ["b", "c"])
    }

    @Test("forceUpdate merges whatever the tag, and creates a missing record (which needs its recordType)",
          arguments: ConformanceBackend.allCases)
    func forceUpdate(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("n", fields: ["a": value(1)]))], zoneID: zone)
        let merged = try await user.modify([operation("forceUpdate", recordDictionary(
            "n", tag: "stale", fields: ["b": value(2)]))], zoneID: zone)
        #expect(merged.records.first?.fieldNames == ["a", "b"])
        let created = try await user.modify([operation("forceUpdate", recordDictionary(
            "new", fields: ["b": value(2)]))], zoneID: zone)
        #expect(created.recordCodes == [nil] && created.records.first?.fieldNames == ["b"])
        let typeless = try await user.modify([operation("forceUpdate", recordDictionary(
            "other", type: nil, fields: ["b": value(2)]))], zoneID: zone)
        #expect(typeless.recordCodes == ["BAD_REQUEST"])
    }

    @Test("replace makes the record exactly what was sent, when the tag is the server's",
          arguments: ConformanceBackend.allCases)
    func replace(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary(
            "n", fields: ["a": value(1), "b": value(2)]))], zoneID: zone)
        let tag = try #require(made.records.first?.tag)
        let replaced = try await user.modify([operation("replace", recordDictionary("n", tag: tag,
                                                                                    fields: ["c": value(3)]))],
                                             zoneID: zone)
        #expect(replaced.records.first?.fieldNames == ["c"])
        let stale = try await user.modify([operation("replace", recordDictionary("n", tag: tag, fields: [:]))],
                                          zoneID: zone)
        #expect(stale.recordCodes == ["CONFLICT"] && stale.records.first?["serverRecord"] != nil)
        #expect(try await user.fetch("n", zoneID: zone)?.fieldNames == ["c"])
    }

    @Test("forceReplace replaces whatever the tag, and creates a missing record",
          arguments: ConformanceBackend.allCases)
    func forceReplace(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("n", fields: ["a": value(1)]))], zoneID: zone)
        let reply = try await user.modify([
            operation("forceReplace", recordDictionary("n", tag: "stale", fields: ["b": value(2)])),
            operation("forceReplace", recordDictionary("fresh", fields: ["c": value(3)])),
        ], zoneID: zone)
        #expect(reply.recordCodes == [nil, nil])
        #expect(reply.records.map(\.fieldNames) == [["b"], ["c"]])
    }

    @Test("delete: with the server's tag or none it deletes; a stale tag is CONFLICT and the record stays",
          arguments: ConformanceBackend.allCases)
    func delete(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary("a", fields: [:])),
                                          operation("create", recordDictionary("b", fields: [:]))], zoneID: zone)
        let tagA = try #require(made.records.first?.tag)
        let stale = try await user.modify([operation("delete", ["recordName": "a", "recordChangeTag": "nope"])],
                                          zoneID: zone)
        #expect(stale.recordCodes == ["CONFLICT"] && stale.records.first?["serverRecord"] != nil)
        #expect(try await user.fetch("a", zoneID: zone) != nil)
        let reply = try await user.modify([operation("delete", ["recordName": "a", "recordChangeTag": tagA]),
                                           // "a record dictionary with a single key-value pair,
                                           // whose key is recordName"
                                           operation("delete", ["recordName": "b"])], zoneID: zone)
        #expect(reply.recordCodes == [nil, nil])
        #expect(reply.records.map { $0["deleted"] as? Bool } == [true, true])
        #expect(try await user.lookup(["a", "b"], zoneID: zone).recordCodes == ["NOT_FOUND", "NOT_FOUND"])
    }

    @Test("forceDelete deletes whatever the tag; a missing record is NOT_FOUND", arguments: ConformanceBackend.allCases)
    func forceDelete(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("a", fields: [:]))], zoneID: zone)
        let reply = try await user.modify([operation("forceDelete", ["recordName": "a", "recordChangeTag": "stale"])],
                                          zoneID: zone)
        #expect(reply.recordCodes == [nil] && reply.records.first?["deleted"] as? Bool == true)
        let again = try await user.modify([operation("forceDelete", ["recordName": "a"])], zoneID: zone,
                                          ["atomic": false])
        #expect(again.recordCodes == ["NOT_FOUND"])
    }

    @Test("operation types mix freely in one request, applied and answered in order",
          arguments: ConformanceBackend.allCases)
    func mixed(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary("u", fields: ["a": value(1)])),
                                          operation("create", recordDictionary("r", fields: ["a": value(1)])),
                                          operation("create", recordDictionary("d", fields: [:]))], zoneID: zone)
        let tags = made.records.map(\.tag)
        let reply = try await user.modify([
            operation("delete", ["recordName": "d"]),
            operation("create", recordDictionary("c", fields: ["x": value(1)])),
            operation("update", recordDictionary("u", tag: tags[0], fields: ["b": value(2)])),
            operation("replace", recordDictionary("r", tag: tags[1], fields: ["b": value(2)])),
            operation("forceUpdate", recordDictionary("fu", fields: ["b": value(2)])),
        ], zoneID: zone)
        #expect(reply.status == 200 && reply.recordCodes == [nil, nil, nil, nil, nil])
        #expect(reply.records.map { $0["recordName"] as? String } == ["d", "c", "u", "r", "fu"])
        #expect(reply.records.map(\.fieldNames) == [[], ["x"], ["a", "b"], ["b"], ["b"]])
    }

    @Test("atomic (the default) in a custom zone: one failure, ATOMIC_ERROR for the others, nothing applied",
          arguments: ConformanceBackend.allCases)
    func atomicByDefault(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("taken", fields: ["v": value(1)])),
                                   operation("create", recordDictionary("other", fields: [:]))], zoneID: zone)
        let reply = try await user.modify([operation("create", recordDictionary("fresh", fields: [:])),
                                           operation("create", recordDictionary("taken", fields: ["v": value(2)])),
                                           operation("forceDelete", ["recordName": "other"])], zoneID: zone)
        #expect(reply.status == 200 && reply.recordCodes == ["ATOMIC_ERROR", "CONFLICT", "ATOMIC_ERROR"])
        #expect(try await user.lookup(["fresh", "taken", "other"], zoneID: zone).recordCodes == ["NOT_FOUND", nil, nil])
        #expect(try await user.fetch("taken", zoneID: zone)?.int("v") == 1)
    }

    @Test("atomic false: the operations that can be applied are", arguments: ConformanceBackend.allCases)
    func notAtomic(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("taken", fields: [:]))], zoneID: zone)
        let reply = try await user.modify([operation("create", recordDictionary("fresh", fields: [:])),
                                           operation("create", recordDictionary("taken", fields: [:]))],
                                          zoneID: zone, ["atomic": false])
        #expect(reply.recordCodes == [nil, "CONFLICT"])
        #expect(try await user.fetch("fresh", zoneID: zone) != nil)
    }

    @Test("atomic applies only to custom zones: in the default zone each operation stands alone",
          arguments: ConformanceBackend.allCases)
    func atomicNotInDefaultZone(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        _ = try await user.modify([operation("create", recordDictionary("taken", fields: [:]))])
        let reply = try await user.modify([operation("create", recordDictionary("fresh", fields: [:])),
                                           operation("create", recordDictionary("taken", fields: [:]))],
                                          zoneID: nil, ["atomic": true])
        #expect(reply.recordCodes == [nil, "CONFLICT"])
        #expect(try await user.fetch("fresh") != nil)
    }

    @Test("one operation per record: a record named twice is BAD_REQUEST and nothing is applied",
          arguments: ConformanceBackend.allCases)
    func onePerRecord(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.modify([operation("create", recordDictionary("x", fields: [:])),
                                           operation("forceReplace", recordDictionary("x", fields: [:]))], zoneID: zone)
        #expect(reply.status == 400 && reply.code == "BAD_REQUEST")
        #expect(try await user.fetch("x", zoneID: zone) == nil)
    }

    @Test("desiredKeys limits the fields answered; an operation's own desiredKeys overrides the request's",
          arguments: ConformanceBackend.allCases)
    func desiredKeys(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let fields: [String: Any] = ["a": value(1), "b": value(2), "c": value(3)]
        var second = operation("create", recordDictionary("two", fields: fields))
        second["desiredKeys"] = ["c"]
        let reply = try await user.modify([operation("create", recordDictionary("one", fields: fields)), second,
                                           operation("create", recordDictionary("three", fields: fields))],
                                          zoneID: zone, ["desiredKeys": ["a", "b", "zzz"]])
        #expect(reply.records.map(\.fieldNames) == [["a", "b"], ["c"], ["a", "b"]])
        let none = try await user.modify([operation("forceUpdate", recordDictionary("one", fields: [:]))],
                                         zoneID: zone, ["desiredKeys": [String]()])
        #expect(none.records.first?.fieldNames == [])
        // What is stored is every field.
        #expect(try await user.fetch("two", zoneID: zone)?.fieldNames == ["a", "b", "c"])
    }

    @Test("numbersAsStrings writes INT64, DOUBLE and TIMESTAMP values as strings",
          arguments: ConformanceBackend.allCases)
    func numbersAsStrings(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let reply = try await user.modify([operation("create", recordDictionary("n", fields: [
            "i": value(9_223_372_036_854_775_807 as Int64, "INT64"), "d": value(0.5, "DOUBLE"),
            "t": value(1_700_000_000_123 as Int64, "TIMESTAMP"), "s": value("x"),
            "l": value([1, 2], "INT64_LIST"),
        ]))], zoneID: zone, ["numbersAsStrings": true])
        let record = try #require(reply.records.first)
        #expect(record.field("i") as? String == "9223372036854775807" && record.fieldType("i") == "INT64")
        #expect(record.field("d") as? String == "0.5" && record.field("t") as? String == "1700000000123")
        #expect(record.field("s") as? String == "x" && record.field("l") as? [String] == ["1", "2"])
    }

    @Test("a record type cannot change: update naming another type is BAD_REQUEST",
          arguments: ConformanceBackend.allCases)
    func typeIsKept(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let made = try await user.modify([operation("create", recordDictionary("n", type: "Note", fields: [:]))],
                                         zoneID: zone)
        let reply = try await user.modify([operation("update", recordDictionary(
            "n", type: "Other", tag: made.records.first?.tag, fields: [:]))], zoneID: zone)
        #expect(reply.recordCodes == ["BAD_REQUEST"])
    }

    @Test("a fetched record sent back as it is updates: the keys the server sets are not read",
          arguments: ConformanceBackend.allCases)
    func responseKeysSentBack(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        _ = try await user.modify([operation("create", recordDictionary("n", fields: ["v": value(1)]))], zoneID: zone)
        var fetched = try #require(try await user.fetch("n", zoneID: zone))
        fetched["fields"] = ["v": value(2)]
        fetched["deleted"] = false
        let reply = try await user.modify([operation("update", fetched)], zoneID: zone)
        #expect(reply.recordCodes == [nil] && reply.records.first?.int("v") == 2)
    }

    @Test("parent: kept and returned; update without it keeps it, replace without it drops it",
          arguments: ConformanceBackend.allCases)
    func parent(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        var child = recordDictionary("child", fields: [:])
        child["parent"] = ["recordName": "root"]
        let made = try await user.modify([operation("create", recordDictionary("root", fields: [:])),
                                          operation("create", child)], zoneID: zone)
        #expect((made.records.last?["parent"] as? [String: Any])?["recordName"] as? String == "root")
        let updated = try await user.modify([operation("update", recordDictionary(
            "child", tag: made.records.last?.tag, fields: ["v": value(1)]))], zoneID: zone)
        #expect((updated.records.first?["parent"] as? [String: Any])?["recordName"] as? String == "root")
        let replaced = try await user.modify([operation("replace", recordDictionary(
            "child", tag: updated.records.first?.tag, fields: [:]))], zoneID: zone)
        #expect(replaced.records.first?["parent"] == nil)
    }

    @Test("request keys: an unknown one, a missing operations, an unknown operationType are BAD_REQUEST naming them",
          arguments: ConformanceBackend.allCases)
    func requestKeys(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        let unknown = try await user.modify([operation("create", recordDictionary("n", fields: [:]))], zoneID: zone,
                                            ["atomically": true])
        #expect(unknown.status == 400 && unknown.code == "BAD_REQUEST" && unknown.reason.contains("atomically"))
        let noOperations = try await user.post("records/modify", ["zoneID": zone])
        #expect(noOperations.status == 400 && noOperations.reason.contains("operations"))
        let badType = try await user.modify([operation("upsert", recordDictionary("n", fields: [:]))], zoneID: zone)
        #expect(badType.status == 400 && badType.reason.contains("upsert"))
        var badOperation = operation("create", recordDictionary("n", fields: [:]))
        badOperation["savePolicy"] = "x"
        let opKey = try await user.modify([badOperation], zoneID: zone)
        #expect(opKey.status == 400 && opKey.reason.contains("savePolicy"))
        var badRecord = recordDictionary("n", fields: [:])
        badRecord["colour"] = "red"
        let recordKey = try await user.modify([operation("create", badRecord)], zoneID: zone)
        #expect(recordKey.status == 400 && recordKey.reason.contains("colour"))
        #expect(try await user.fetch("n", zoneID: zone) == nil)
    }

    @Test("createShortGUID: a shortGUID, kept by every later save; malformed: BAD_REQUEST, none applied",
          arguments: ConformanceBackend.allCases)
    func createShortGUID(_ backend: ConformanceBackend) async throws {
        let (user, zone) = try await setUp(backend)
        var asked = recordDictionary("n", fields: ["v": value(1)])
        asked["createShortGUID"] = true
        let made = try await user.modify([operation("create", asked)], zoneID: zone)
        let saved = try #require(made.records.first)
        let guid = try #require(saved["shortGUID"] as? String, "\(made)")
        #expect(made.status == 200 && guid.count == 26)
        #expect(try await user.fetch("n", zoneID: zone)?["shortGUID"] as? String == guid)
        // An update without the key, a replace, and an update asking again: the same short GUID.
        let updated = try await user.modify([operation("update", recordDictionary(
            "n", tag: saved.tag, fields: ["w": value(2)]))], zoneID: zone)
        #expect(updated.records.first?["shortGUID"] as? String == guid, "\(updated)")
        var again = recordDictionary("n", tag: updated.records.first?.tag, fields: [:])
        again["createShortGUID"] = true
        let replaced = try await user.modify([operation("replace", again)], zoneID: zone)
        #expect(replaced.records.first?["shortGUID"] as? String == guid, "\(replaced)")
        // A record saved without it has none; asked for on an update, it gets one.
        let plain = try await user.modify([operation("create", recordDictionary("p", fields: [:]))], zoneID: zone)
        #expect(plain.records.first?["shortGUID"] == nil)
        var later = recordDictionary("p", tag: plain.records.first?.tag, fields: [:])
        later["createShortGUID"] = true
        let given = try await user.modify([operation("update", later)], zoneID: zone)
        #expect((given.records.first?["shortGUID"] as? String).map { $0 != guid } == true, "\(given)")

        var malformed = recordDictionary("m", fields: [:])
        malformed["createShortGUID"] = "yes"
        let bad = try await user.modify([operation("create", recordDictionary("first", fields: [:])),
                                         operation("create", malformed)], zoneID: zone)
        #expect(bad.status == 400 && bad.code == "BAD_REQUEST" && bad.reason.contains("createShortGUID"), "\(bad)")
        #expect(try await user.fetch("first", zoneID: zone) == nil)
        let share = try await user.modify([operation("create", recordDictionary("s", type: "cloudkit.share",
                                                                                fields: [:]))], zoneID: zone)
        #expect(share.status == 400 && share.reason.contains("cloudkit.share"))
    }
}
