import Testing
import ZoneCore
@testable import RecordStore

/// Query subscriptions fire per record, as CloudKit's do: for records matching the query (type
/// and filters), on the changes `firesOn` names, each notification naming the record and why;
/// `firesOnce` removes the subscription once it fired; database and zone subscriptions notify as
/// before.
@Suite struct QuerySubscriptionFiringTests {
    let room = ZoneID(zoneName: "room_q", ownerName: "alice")
    let author = RequestContext(user: "alice", deviceID: "writer", now: Instant(nanosecondsSinceEpoch: 1_000_000_000))

    private func engine(_ subs: [Subscription]) throws -> StoreEngine {
        var engine = StoreEngine()
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, author)
        let saved = try engine.modifySubscriptions(save: subs, delete: [], scope: .private, author)
        #expect(saved.allSatisfy { $0.error == nil }, "\(saved)")
        var phone = author
        phone.deviceID = "phone"
        try engine.registerDevice(phone)
        _ = engine.drainNotifications()
        return engine
    }

    private func note(_ name: String, _ n: Int64) -> Record {
        Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room), fields: ["n": .int64(n)])
    }

    private func bigNotes() -> Subscription {
        var sub = Subscription(subscriptionID: "big", kind: .query(recordType: "Note", zoneID: room))
        sub.query = RecordQuery(recordType: "Note", filters: [QueryFilter(.greaterThan, "n", .int64(10))])
        return sub
    }

    private func fired(_ engine: inout StoreEngine) -> [String] {
        engine.drainNotifications().map { n in
            "\(n.notification.subscriptionID) \(n.notification.recordName ?? "-") "
                + "\(n.notification.queryNotificationReason?.rawValue ?? "-") \(n.deviceID)"
        }
    }

    @Test func firesPerMatchingRecordWithItsNameAndReason() throws {
        var engine = try engine([bigNotes()])
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note("small", 1), note("large", 50)]),
                                     scope: .private, author)
        #expect(fired(&engine) == ["big large recordCreated phone"])
        // Updated into the query, and out of it: both are updates of a record it matched once.
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note("small", 20)], savePolicy: .changedKeys),
                                     scope: .private, author)
        #expect(fired(&engine) == ["big small recordUpdated phone"])
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note("large", 2)], savePolicy: .changedKeys),
                                     scope: .private, author)
        #expect(fired(&engine) == ["big large recordUpdated phone"])
        _ = try engine.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "small", zoneID: room),
                                                                     RecordID(recordName: "large", zoneID: room)]),
                                     scope: .private, author)
        #expect(fired(&engine) == ["big small recordDeleted phone"])
    }

    @Test func firesOnlyOnTheChangesNamedAndOnceWhenAsked() throws {
        var onDelete = bigNotes()
        onDelete.subscriptionID = "deletes"
        onDelete.firesOn = [.delete]
        var once = bigNotes()
        once.subscriptionID = "once"
        once.firesOnce = true
        var engine = try engine([onDelete, once])
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note("a", 11), note("b", 12)]),
                                     scope: .private, author)
        #expect(fired(&engine) == ["once a recordCreated phone"])
        #expect(try engine.listSubscriptions(scope: .private, author).map(\.subscriptionID) == ["deletes"])
        _ = try engine.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "a", zoneID: room)]),
                                     scope: .private, author)
        #expect(fired(&engine) == ["deletes a recordDeleted phone"])
    }

    @Test func databaseAndZoneSubscriptionsNotifyAsBefore() throws {
        var engine = try engine([Subscription(subscriptionID: "db", kind: .database),
                                 Subscription(subscriptionID: "z", kind: .zone(room)), bigNotes()])
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note("x", 1), note("y", 2)]), scope: .private, author)
        let sent = engine.drainNotifications()
        #expect(sent.map(\.notification.subscriptionID) == ["db", "z"], "one each per request, no query match")
        #expect(sent.allSatisfy { $0.notification.recordName == nil && $0.notification.queryNotificationReason == nil })
    }

    @Test func aQueryOverTheLimitsIsRefused() throws {
        var engine = StoreEngine()
        var huge = bigNotes()
        huge.query?.filters = Array(repeating: QueryFilter(.equals, "n", .int64(1)), count: 65)
        var loud = Subscription(subscriptionID: "loud", kind: .database)
        var info = NotificationInfo()
        info.strings["alertBody"] = String(repeating: "x", count: 5000)
        loud.notificationInfo = info
        let results = try engine.modifySubscriptions(save: [huge, loud], delete: [], scope: .private, author)
        #expect(results.map { $0.error?.code } == [.limitExceeded, .limitExceeded])
    }
}
