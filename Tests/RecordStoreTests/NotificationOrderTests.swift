import Testing
import ZoneCore
@testable import RecordStore

/// The engine notifies per subscription that fires, in subscription ID order, and within each per
/// registered device in name order, the author's own device skipped: notification IDs, and so what
/// coalescing keeps, depend on that order. One subscription for one device (the common case) is
/// sent without gathering or sorting; several must come out as before.
@Suite struct NotificationOrderTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")

    @Test func severalSubscriptionsAndDevicesInIDThenNameOrder() throws {
        var engine = StoreEngine()
        let author = RequestContext(user: "alice", deviceID: "w", now: Instant(nanosecondsSinceEpoch: 1_000_000_000))
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, author)
        let saved = try engine.modifySubscriptions(save: [
            Subscription(subscriptionID: "z", kind: .zone(room)),
            Subscription(subscriptionID: "db", kind: .database),
            Subscription(subscriptionID: "other-type", kind: .query(recordType: "Photo", zoneID: nil)),
            Subscription(subscriptionID: "q", kind: .query(recordType: "Note", zoneID: nil)),
        ], delete: [], scope: .private, author)
        #expect(saved.allSatisfy { $0.error == nil })
        for device in ["w", "c-phone", "a-tablet", "b-laptop"] {
            var ctx = author
            ctx.deviceID = device
            try engine.registerDevice(ctx)
        }
        _ = engine.drainNotifications()

        let note = Record(recordType: "Note", id: RecordID(recordName: "n1", zoneID: room), fields: ["t": .int64(1)])
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note]), scope: .private, author)
        let sent = engine.drainNotifications()
        // Database and zone subscriptions per request in ID order, then query subscriptions per
        // record (QuerySubscriptionFiringTests).
        let expected = ["db", "z", "q"].flatMap { sub in ["a-tablet", "b-laptop", "c-phone"].map { (sub, $0) } }
        #expect(sent.map { "\($0.notification.subscriptionID) \($0.deviceID)" } == expected.map { "\($0) \($1)" })
        #expect(sent.allSatisfy { $0.userRecordName == "alice" && $0.notification.databaseScope == .private })
        #expect(sent.map { $0.notification.zoneID } == [nil, nil, nil] + Array(repeating: room, count: 6))
        let ids = sent.map(\.notification.notificationID)
        #expect(ids == Array(ids[0]..<ids[0] + UInt64(ids.count)), "numbered in the order sent")
        #expect(engine.drainNotifications().isEmpty, "a drain hands everything over")
    }

    @Test func oneSubscriptionForOneOtherDevice() throws {
        var engine = try EngineFixture.roomWithListener()
        let (author, listener) = (EngineFixture.author, EngineFixture.listener)
        let note = Record(recordType: "Note", id: RecordID(recordName: "n1", zoneID: room))
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note]), scope: .private, author)
        let sent = engine.drainNotifications()
        #expect(sent.map(\.deviceID) == ["l"] && sent.map(\.notification.subscriptionID) == ["db"])
        // The author writes from the listener's device: nobody else is registered, nothing is sent.
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [note], savePolicy: .allKeys), scope: .private,
                                     listener)
        #expect(engine.drainNotifications().isEmpty)
    }
}
