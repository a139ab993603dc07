import Testing
import ZoneCore
@testable import RecordStore

/// The engine's two outboxes: mutations for the journal, notifications for push. A drain hands
/// over everything since the last one; a store that journals nothing keeps no mutations, which
/// changes neither the state nor the notifications.
@Suite struct EngineOutboxTests {
    let room = EngineFixture.room
    let author = EngineFixture.author

    func roomWithListener() throws -> StoreEngine { try EngineFixture.roomWithListener() }

    func save(_ name: String, in engine: inout StoreEngine) throws {
        let note = Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room), fields: ["n": .int64(1)])
        let result = try engine.modifyRecords(ModifyRecordsRequest(saves: [note]), scope: .private, author)
        #expect(result.failures.isEmpty)
    }

    @Test func drainsHandOverEverythingOnce() throws {
        var engine = try roomWithListener()
        #expect(engine.drainMutations().count == 3, "zone, subscription, device")
        try save("n1", in: &engine)
        #expect(engine.drainMutations().count == 1)
        #expect(engine.drainMutations().isEmpty)
        #expect(engine.drainNotifications().count == 1)
        #expect(engine.drainNotifications().isEmpty)
        try save("n2", in: &engine)
        #expect(engine.drainMutations().count == 1, "the outbox takes mutations again after a drain")
        #expect(engine.drainNotifications().count == 1)
    }

    @Test func unkeptMutationsLeaveStateAndNotificationsAlone() throws {
        var kept = try roomWithListener()
        var discarding = kept
        discarding.keepsMutations = false
        #expect(discarding.drainMutations().isEmpty && kept.drainMutations().count == 3)
        for name in ["n1", "n2", "n3"] {
            try save(name, in: &kept)
            try save(name, in: &discarding)
            #expect(discarding.drainMutations().isEmpty)
            #expect(kept.drainNotifications() == discarding.drainNotifications())
        }
        #expect(kept.drainMutations().count == 3)
        let page = try kept.fetchZoneChanges(room, since: nil, scope: .private, author)
        #expect(page.changed.count == 3)
        #expect(try discarding.fetchZoneChanges(room, since: nil, scope: .private, author) == page)
    }
}
