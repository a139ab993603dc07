import Testing
import ZoneCore
@testable import RecordStore

/// The engine's two outboxes: mutations for the journal, notifications for push. A drain hands
/// over everything since the last one; a store that journals nothing discards its mutations,
/// which changes neither the state nor the notifications.
@Suite struct EngineOutboxTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")
    let author = RequestContext(user: "alice", deviceID: "w", now: Instant(nanosecondsSinceEpoch: 1_000_000_000))

    /// A zone with a database subscription and a second device to notify.
    func roomWithListener() throws -> StoreEngine {
        var engine = StoreEngine()
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, author)
        _ = try engine.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)], delete: [],
                                           scope: .private, author)
        var listener = author
        listener.deviceID = "l"
        try engine.registerDevice(listener)
        return engine
    }

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

    @Test func discardedMutationsLeaveStateAndNotificationsAlone() throws {
        var kept = try roomWithListener()
        var discarding = kept
        discarding.discardMutations()
        #expect(discarding.drainMutations().isEmpty && kept.drainMutations().count == 3)
        for name in ["n1", "n2", "n3"] {
            try save(name, in: &kept)
            try save(name, in: &discarding)
            discarding.discardMutations()
            #expect(discarding.drainMutations().isEmpty)
            #expect(kept.drainNotifications() == discarding.drainNotifications())
        }
        #expect(kept.drainMutations().count == 3)
        let page = try kept.fetchZoneChanges(room, since: nil, scope: .private, author)
        #expect(page.changed.count == 3)
        #expect(try discarding.fetchZoneChanges(room, since: nil, scope: .private, author) == page)
    }
}
