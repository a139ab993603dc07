import Testing
import ZoneCore
@testable import RecordStore

/// Subscription format 2 round-trips every key; a subscription that uses none of them is written
/// as the first format wrote it (earlier builds read it); a query notification's record and reason
/// cross the PostgreSQL log.
@Suite struct SubscriptionFormatTests {
    private func roundTrip(_ sub: Subscription) throws -> (Subscription, [UInt8]) {
        var w = ByteWriter(capacity: 64)
        MutationCodec.encode(sub, into: &w)
        var r = ByteReader(w.bytes)
        let back = try MutationCodec.decodeSubscription(&r)
        #expect(r.remaining == 0)
        return (back, w.bytes)
    }

    @Test func everyKeyRoundTrips() throws {
        var sub = Subscription(subscriptionID: "q", kind: .query(recordType: "Note", zoneID: ZoneID(zoneName: "z")))
        sub.query = RecordQuery(recordType: "Note",
                                filters: [QueryFilter(.near, "at", .location(Location(latitude: 1, longitude: 2)),
                                                      distance: 50),
                                          QueryFilter(.isIn, "n", .list([.int64(1), .int64(2)]))],
                                sort: [QuerySort("n", ascending: false)])
        sub.firesOn = [.create, .delete]
        sub.firesOnce = true
        var info = NotificationInfo()
        info.strings["alertBody"] = "hi"
        info.alertLocalizationArgs = ["a", "b"]
        info.shouldBadge = false
        sub.notificationInfo = info
        let (back, bytes) = try roundTrip(sub)
        #expect(back == sub)
        #expect(bytes.contains(SubscriptionCodec.format2))
        // Cut anywhere, it is refused, never misread.
        for cut in 0..<bytes.count {
            var r = ByteReader(Array(bytes[0..<cut]))
            #expect(throws: (any Error).self) { try MutationCodec.decodeSubscription(&r) }
        }
    }

    @Test func aPlainSubscriptionKeepsTheFirstFormat() throws {
        for sub in [Subscription(subscriptionID: "db", kind: .database),
                    Subscription(subscriptionID: "q", kind: .query(recordType: "Note", zoneID: nil))] {
            let (back, bytes) = try roundTrip(sub)
            #expect(back == sub)
            #expect(bytes[1 + sub.subscriptionID.utf8.count] < SubscriptionCodec.format2, "kind byte of format 1")
        }
    }

    @Test func queryNotificationsCrossTheSharedLog() throws {
        let n = PushNotification(notificationID: 7, subscriptionID: "q", databaseScope: .private,
                                 zoneID: ZoneID(zoneName: "z", ownerName: "a"), recordName: "r1",
                                 queryNotificationReason: .recordDeleted)
        let plain = PushNotification(notificationID: 8, subscriptionID: "db", databaseScope: .private, zoneID: nil)
        let notes = [DeviceNotification(userRecordName: "a", deviceID: "d", notification: n),
                     DeviceNotification(userRecordName: "a", deviceID: "d", notification: plain)]
        let (_, back) = try SharedLogEntryCodec.decode(SharedLogEntryCodec.encode([], notes))
        #expect(back == notes)
    }
}
