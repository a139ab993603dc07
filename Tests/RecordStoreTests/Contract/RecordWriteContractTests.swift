import Testing
import RecordStore
import ZoneCore

/// docs/STORE.md "Model" and "Writes", through the StoreClient interface.
@Suite("Contract: records and writes")
struct RecordWriteContractTests {
    let room = ZoneID(zoneName: "room_a")

    private func setUp(_ backend: ContractBackend) async throws -> (ContractStore, any StoreClient) {
        let store = try await backend.makeStore()
        let alice = store.client("alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        return (store, alice)
    }

    @Test("record names: ASCII, 1–255 characters, not starting with _", arguments: ContractBackend.allCases)
    func recordNameRules(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        for bad in ["", "_hidden", String(repeating: "x", count: 256), "caf\u{e9}", "tab\there"] {
            let result = try await alice.modifyRecords(ModifyRecordsRequest(saves: [record(bad)]), scope: .private)
            #expect(result.results.first?.error?.code == .invalidArguments, "name \(bad.debugDescription)")
        }
        let longest = String(repeating: "x", count: 255)
        let ok = try await alice.modifyRecords(ModifyRecordsRequest(saves: [record(longest)]), scope: .private)
        #expect(ok.results.first?.record != nil)
    }

    @Test("a record holds at most 1 MB of field data", arguments: ContractBackend.allCases)
    func recordSizeLimit(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let key = "blob"
        let fits = record("fits", ["blob": .bytes([UInt8](repeating: 1, count: 1024 * 1024 - key.utf8.count))])
        let tooBig = record("big", ["blob": .bytes([UInt8](repeating: 1, count: 1024 * 1024 - key.utf8.count + 1))])
        let r1 = try await alice.modifyRecords(ModifyRecordsRequest(saves: [fits]), scope: .private)
        #expect(r1.results[0].record != nil)
        let r2 = try await alice.modifyRecords(ModifyRecordsRequest(saves: [tooBig]), scope: .private)
        #expect(r2.results[0].error?.code == .limitExceeded)
    }

    @Test("at most 200 operations per request", arguments: ContractBackend.allCases)
    func itemLimit(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let ok = (0..<200).map { record("r\($0)") }
        let saved = try await alice.modifyRecords(ModifyRecordsRequest(saves: ok), scope: .private).savedRecords
        #expect(saved.count == 200)
        let tooMany = ModifyRecordsRequest(saves: (0..<200).map { record("s\($0)") },
                                           deletes: [RecordID(recordName: "r0", zoneID: room)])
        let error = await storeError { _ = try await alice.modifyRecords(tooMany, scope: .private) }
        #expect(error?.code == .limitExceeded)
        // Nothing of a refused request is applied.
        let lookup = try await alice.lookupRecords([RecordID(recordName: "s0", zoneID: room)], scope: .private)
        #expect(lookup[0].error?.code == .unknownItem)
    }

    @Test("at most 2 MB per request", arguments: ContractBackend.allCases)
    func requestSizeLimit(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let blob = FieldValue.bytes([UInt8](repeating: 7, count: 700 * 1024))
        let three = (0..<3).map { record("b\($0)", ["blob": blob]) }
        let error = await storeError { _ = try await alice.modifyRecords(ModifyRecordsRequest(saves: three), scope: .private) }
        #expect(error?.code == .limitExceeded)
        let two = try await alice.modifyRecords(ModifyRecordsRequest(saves: Array(three.prefix(2))), scope: .private)
        #expect(two.savedRecords.count == 2)
    }

    @Test("a record named twice in one request is refused", arguments: ContractBackend.allCases)
    func duplicateItems(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let error = await storeError {
            _ = try await alice.modifyRecords(ModifyRecordsRequest(saves: [record("x"), record("x")]), scope: .private)
        }
        #expect(error?.code == .invalidArguments)
    }

    @Test("change tags are new on every save; created/modified are stamped", arguments: ContractBackend.allCases)
    func changeTagsAndStamps(_ backend: ContractBackend) async throws {
        let (store, alice) = try await setUp(backend)
        let first = try await alice.save([record("n", ["v": .int64(1)])])[0]
        store.clock.advance(by: .seconds(5))
        var next = first
        next["v"] = .int64(2)
        let second = try await alice.save([next])[0]
        #expect(first.recordChangeTag != nil)
        #expect(second.recordChangeTag != first.recordChangeTag)
        #expect(second.created == first.created)
        #expect(second.modified!.timestamp == first.modified!.timestamp + 5000)
        #expect(second.modified!.userRecordName == "alice")
    }

    @Test("ifServerRecordUnchanged: a stale tag gets serverRecordChanged with the server's record",
          arguments: ContractBackend.allCases)
    func staleTagConflict(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let v1 = try await alice.save([record("n", ["v": .int64(1)])])[0]
        var v2 = v1
        v2["v"] = .int64(2)
        let saved2 = try await alice.save([v2])[0]
        var stale = v1
        stale["v"] = .int64(3)
        let r = try await alice.modifyRecords(ModifyRecordsRequest(saves: [stale]), scope: .private)
        let error = try #require(r.results[0].error)
        #expect(error.code == .serverRecordChanged)
        #expect(error.serverRecord?.recordChangeTag == saved2.recordChangeTag)
        #expect(error.serverRecord?["v"] == .int64(2))
    }

    @Test("saving a new record over an existing name without a tag: serverRecordChanged",
          arguments: ContractBackend.allCases)
    func createOverExisting(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save([record("n", ["v": .int64(1)])])
        let r = try await alice.modifyRecords(ModifyRecordsRequest(saves: [record("n", ["v": .int64(9)])]), scope: .private)
        #expect(r.results[0].error?.code == .serverRecordChanged)
        #expect(r.results[0].error?.serverRecord?["v"] == .int64(1))
    }

    @Test("a tag for a record that no longer exists: unknownItem", arguments: ContractBackend.allCases)
    func tagForDeletedRecord(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let saved = try await alice.save([record("n")])[0]
        _ = try await alice.modifyRecords(ModifyRecordsRequest(deletes: [saved.id]), scope: .private)
        let r = try await alice.modifyRecords(ModifyRecordsRequest(saves: [saved]), scope: .private)
        #expect(r.results[0].error?.code == .unknownItem)
    }

    @Test("changedKeys merges fields, allKeys replaces them; both ignore tags", arguments: ContractBackend.allCases)
    func changedKeysAndAllKeys(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save([record("n", ["a": .int64(1), "b": .int64(2)])])
        let merged = try await alice.save([record("n", ["b": .int64(20)])], policy: .changedKeys)[0]
        #expect(merged.fields == ["a": .int64(1), "b": .int64(20)])
        let replaced = try await alice.save([record("n", ["c": .string("x")])], policy: .allKeys)[0]
        #expect(replaced.fields == ["c": .string("x")])
    }

    @Test("atomic: a failure fails the zone's other items with batchRequestFailed; other zones apply",
          arguments: ContractBackend.allCases)
    func atomicPerZone(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let other = ZoneID(zoneName: "room_b")
        _ = try await alice.modifyZones(save: [other], delete: [], scope: .private)
        try await alice.save([record("exists")])
        let request = ModifyRecordsRequest(
            saves: [record("fresh"), record("exists"), record("elsewhere", in: other)], atomic: true)
        let r = try await alice.modifyRecords(request, scope: .private)
        #expect(r.results[0].error?.code == .batchRequestFailed)
        #expect(r.results[1].error?.code == .serverRecordChanged)
        #expect(r.results[2].record != nil)
        let fresh = try await alice.lookupRecords([RecordID(recordName: "fresh", zoneID: room)], scope: .private)
        #expect(fresh[0].error?.code == .unknownItem)

        // Without atomic, the good item lands.
        let partial = try await alice.modifyRecords(
            ModifyRecordsRequest(saves: [record("fresh"), record("exists")], atomic: false), scope: .private)
        #expect(partial.results[0].record != nil)
        #expect(partial.results[1].error?.code == .serverRecordChanged)
    }

    @Test("unknown zone: zoneNotFound; deleting a missing record: unknownItem", arguments: ContractBackend.allCases)
    func missingZoneAndRecord(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let r = try await alice.modifyRecords(
            ModifyRecordsRequest(saves: [record("x", in: ZoneID(zoneName: "nowhere"))],
                                 deletes: [RecordID(recordName: "ghost", zoneID: room)]), scope: .private)
        #expect(r.results[0].error?.code == .zoneNotFound)
        #expect(r.results[1].error?.code == .unknownItem)
    }

    @Test("another user's private database is refused", arguments: ContractBackend.allCases)
    func otherUsersPrivateDatabase(_ backend: ContractBackend) async throws {
        let (store, _) = try await setUp(backend)
        let mallory = store.client("mallory")
        let aliceRoom = ZoneID(zoneName: "room_a", ownerName: "alice")
        let w = try await mallory.modifyRecords(ModifyRecordsRequest(saves: [record("x", in: aliceRoom)]), scope: .private)
        #expect(w.results[0].error?.code == .permissionFailure)
        let r = try await mallory.lookupRecords([RecordID(recordName: "x", zoneID: aliceRoom)], scope: .private)
        #expect(r[0].error?.code == .permissionFailure)
        let error = await storeError { _ = try await mallory.fetchZoneChanges(aliceRoom, since: nil, resultsLimit: nil, scope: .private) }
        #expect(error?.code == .permissionFailure)
    }

    @Test("lookup: a missing record is unknownItem for that item alone", arguments: ContractBackend.allCases)
    func lookupPartial(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save([record("here", ["v": .string("hi")])])
        let r = try await alice.lookupRecords([RecordID(recordName: "here", zoneID: room),
                                               RecordID(recordName: "gone", zoneID: room)], scope: .private)
        #expect(r[0].record?["v"] == .string("hi"))
        #expect(r[1].error?.code == .unknownItem)
    }

    @Test("the default zone holds records and cannot be deleted or shared", arguments: ContractBackend.allCases)
    func defaultZone(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save([record("d", in: .defaultZone)])
        let zones = try await alice.listZones(scope: .private)
        #expect(zones.map(\.zoneName) == ["_defaultZone", "room_a"])
        let del = try await alice.modifyZones(save: [], delete: [.defaultZone], scope: .private)
        #expect(del[0].error?.code == .invalidArguments)
        let error = await storeError { _ = try await alice.createShare(zone: .defaultZone, publicPermission: .none, participants: [:]) }
        #expect(error?.code == .invalidArguments)
    }

    @Test("every field type round-trips", arguments: ContractBackend.allCases)
    func fieldTypes(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let fields: RecordFields = [
            "s": .string("héllo \"quoted\"\n"), "i": .int64(-42), "d": .double(3.25), "t": .timestamp(1_700_000_000_123),
            "b": .bytes([0, 1, 255]),
            "r": .reference(Reference(RecordID(recordName: "other",
                                               zoneID: ZoneID(zoneName: "room_a", ownerName: "alice")))),
            "l": .list([.int64(1), .int64(2)]), "ls": .list([.string("a"), .string("b")]),
            "loc": .location(Location(latitude: 48.5, longitude: -2.25, altitude: 10, timestamp: 5)),
            "asset": .asset(Asset(spelling: .asset, fileChecksum: "c", size: 3, referenceChecksum: "rc")),
            "gone": .reference(Reference(RecordID(recordName: "other",
                                                  zoneID: ZoneID(zoneName: "room_a", ownerName: "alice")),
                                         action: .deleteSelf)),
            "el": .emptyList(elementType: "LOCATION"),
        ]
        var typed = record("typed", fields)
        typed.parent = "root"
        try await alice.save([typed])
        let back = try await alice.lookupRecords([RecordID(recordName: "typed", zoneID: room)], scope: .private)
        #expect(back[0].record?.fields == fields)
        #expect(back[0].record?.parent == "root")
        #expect(back[0].record?.modified?.deviceID == "device-1")
    }
}
