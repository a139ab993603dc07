import Testing
import ZoneCore
@testable import RecordStore

/// Room reserved in an engine's zones (as the simulator's trial scene reserves it) changes no
/// content: the same records and change feed, and the same answers to a copy written after it.
@Suite struct EngineCapacityTests {
    private func note(_ name: String) -> Record {
        Record(recordType: "Note", id: RecordID(recordName: name, zoneID: EngineFixture.room), fields: ["n": .int64(1)])
    }

    @Test func reservedRoomChangesNoContent() throws {
        var engine = try EngineFixture.roomWithListener()
        let ctx = EngineFixture.author
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note("a"), note("b"), note("c")]), scope: .private, ctx)
        _ = try engine.modifyRecords(ModifyRecordsRequest(deletes: [note("b").id]), scope: .private, ctx)
        var reserved = engine
        reserved.reserveCapacity(recordsPerZone: 64)
        let zone = try #require(reserved.state.zones[EngineFixture.room])
        #expect(zone.records.capacity >= 2 + 64 && zone.log.latest.capacity >= 3 + 64)
        #expect(zone.records == engine.state.zones[EngineFixture.room]?.records)
        #expect(zone.log.latest == engine.state.zones[EngineFixture.room]?.log.latest)

        // Both go on alike: a save, a lookup, the feed from the start.
        for i in 0..<70 {
            let request = ModifyRecordsRequest(saves: [note("n\(i)")])
            #expect(try engine.modifyRecords(request, scope: .private, ctx)
                    == reserved.modifyRecords(request, scope: .private, ctx))
        }
        let ids = ["a", "b", "n5", "n69", "zz"].map { note($0).id }
        #expect(try engine.lookupRecords(ids, scope: .private, ctx) == reserved.lookupRecords(ids, scope: .private, ctx))
        #expect(try engine.fetchZoneChanges(EngineFixture.room, since: nil, scope: .private, ctx)
                == reserved.fetchZoneChanges(EngineFixture.room, since: nil, scope: .private, ctx))
        #expect(engine.drainNotifications() == reserved.drainNotifications())
    }
}
