import Testing
import ZoneCore
@testable import RecordStore

/// A record that is not there: lookups and deletes name it and its zone (owner resolved) in the
/// same words; and a save hands back the record it committed, tag set, leaving the request's alone.
@Suite struct MissingRecordTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")
    let alice = RequestContext(user: "alice", deviceID: "w", now: Instant(nanosecondsSinceEpoch: 1_000_000_000))

    @Test func lookupsAndDeletesNameTheMissingRecordAndItsZone() throws {
        var engine = StoreEngine()
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, alice)
        let unowned = ZoneID(zoneName: "room_a")
        let found = try engine.lookupRecords([RecordID(recordName: "nope", zoneID: unowned),
                                              RecordID(recordName: "gone", zoneID: .defaultZone)],
                                             scope: .private, alice)
        #expect(found.map(\.error?.code) == [.unknownItem, .unknownItem])
        #expect(found.map(\.error?.message) == ["record nope does not exist in room_a@alice",
                                                "record gone does not exist in _defaultZone@alice"])
        let deleted = try engine.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "x", zoneID: room)]),
                                               scope: .private, alice)
        #expect(deleted.failures.map(\.1.message) == ["record x does not exist in room_a@alice"])
        #expect(ZoneID(zoneName: "z").description == "z" && room.description == "room_a@alice")
    }

    @Test func aSaveReturnsTheRecordItCommittedAndLeavesTheRequestsAlone() throws {
        var engine = StoreEngine()
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, alice)
        let note = Record(recordType: "Note", id: RecordID(recordName: "n", zoneID: room), fields: ["n": .int64(1)])
        let request = ModifyRecordsRequest(saves: [note, note.renamed("m")])
        let saved = try engine.modifyRecords(request, scope: .private, alice).savedRecords
        #expect(saved.map(\.recordChangeTag) == ["1", "2"])
        #expect(request.operations.map(\.record?.recordChangeTag) == [nil, nil])
        let stored = try engine.lookupRecords(saved.map(\.id), scope: .private, alice).map(\.record)
        #expect(stored == saved)
    }
}

private extension Record {
    func renamed(_ name: String) -> Record {
        var copy = self
        copy.id.recordName = name
        return copy
    }
}
