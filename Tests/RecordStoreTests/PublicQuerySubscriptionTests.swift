import Foundation
import Testing
@testable import RecordStore
import ZoneCore

/// Query subscriptions in the public database: each user's own, fired by any user's public write
/// (the subscriptions on the record's type only, `PublicQueryIndex`), and rebuilt with the store:
/// from the journal and from a snapshot.
@Suite("Public query subscriptions")
struct PublicQuerySubscriptionTests {
    let now = Instant(nanosecondsSinceEpoch: 1_000_000_000)

    private func context(_ user: String, _ device: String? = nil) -> RequestContext {
        RequestContext(user: user, deviceID: device, now: now)
    }

    private func subscription(_ id: String, type: String, over n: Int64? = nil) -> Subscription {
        var sub = Subscription(subscriptionID: id, kind: .query(recordType: type, zoneID: nil))
        if let n { sub.query = RecordQuery(recordType: type, filters: [QueryFilter(.greaterThan, "n", .int64(n))]) }
        return sub
    }

    private func post(_ name: String, type: String = "Post", n: Int64 = 0) -> Record {
        Record(recordType: type, id: RecordID(recordName: name), fields: ["n": .int64(n)])
    }

    private func fired(_ engine: inout StoreEngine) -> [String] {
        engine.drainNotifications().map { d in
            let n = d.notification
            return "\(d.userRecordName)/\(d.deviceID) \(n.subscriptionID) \(n.databaseScope.rawValue) "
                + "\(n.recordName ?? "-") \(n.queryNotificationReason?.rawValue ?? "-")"
        }
    }

    @Test("a public write fires every user's matching subscription on its type, in user order, not the author's device")
    func firesPerUser() throws {
        var engine = StoreEngine()
        for (user, sub) in [("bob", subscription("big", type: "Post", over: 10)),
                            ("alice", subscription("posts", type: "Post")),
                            ("carol", subscription("other", type: "Poster"))] {
            let saved = try engine.modifySubscriptions(save: [sub], delete: [], scope: .public, context(user))
            #expect(saved.allSatisfy { $0.error == nil }, "\(saved)")
            try engine.registerDevice(context(user, "\(user)-phone"))
        }
        #expect(engine.state.publicQueries.count == 3)
        _ = engine.drainNotifications()
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [post("a", n: 50), post("b", n: 1)]), scope: .public,
                                     context("alice", "alice-phone"))
        // Alice wrote from her phone: her own subscription tells her other devices only (she has none).
        #expect(fired(&engine) == ["bob/bob-phone big public a recordCreated"])
        _ = try engine.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "b")]), scope: .public,
                                     context("alice", "alice-laptop"))
        #expect(fired(&engine) == ["alice/alice-phone posts public b recordDeleted"])
        // A subscription saved again under another type leaves the old one's place; a deleted one its own.
        _ = try engine.modifySubscriptions(save: [subscription("posts", type: "Poster")], delete: [],
                                           scope: .public, context("alice"))
        let theirs = try engine.modifySubscriptions(save: [], delete: ["big"], scope: .public, context("alice"))
        #expect(theirs.first?.error?.code == .unknownItem, "alice deleted bob's subscription")
        _ = try engine.modifySubscriptions(save: [], delete: ["big"], scope: .public, context("bob"))
        #expect(engine.state.publicQueries.watchers(of: "Post").isEmpty)
        _ = try engine.modifyRecords(ModifyRecordsRequest(saves: [post("c", n: 99)]), scope: .public, context("dan"))
        #expect(fired(&engine) == [])
    }

    @Test("public subscriptions survive a reopen from the journal and from a snapshot, and fire after it",
          arguments: [64 << 20, 2048])
    func survivesReopen(compactAt: Int) async throws {
        let dir = NSTemporaryDirectory() + "zonertc-public-subs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func open() throws -> EmbeddedStore {
            var options = EmbeddedStore.Options(directory: dir)
            options.automaticPush = false
            options.compactionThreshold = compactAt
            return try EmbeddedStore(options: options, clock: ManualClock())
        }
        var store = try open()
        let bob = store.client(user: "bob", deviceID: "bob-phone")
        _ = try await bob.modifySubscriptions(save: [subscription("big", type: "Post", over: 10)], delete: [],
                                              scope: .public)
        try await store.perform(user: "bob", deviceID: "bob-phone", access: .write) { e, ctx throws(StoreError) in
            try e.registerDevice(ctx)
        }
        let filler = store.client(user: "carol")
        for i in 0..<20 {
            try await filler.save([Record(recordType: "Pad", id: RecordID(recordName: "p\(i)"),
                                          fields: ["pad": .bytes([UInt8](repeating: 1, count: 300))])], scope: .public)
        }
        store.close()

        store = try open()
        defer { store.close() }
        let listed = try await store.client(user: "bob").listSubscriptions(scope: .public)
        #expect(listed.map(\.subscriptionID) == ["big"])
        let heard = try await store.perform(user: "carol", deviceID: nil, access: .write) { e, ctx throws(StoreError) in
            _ = try e.modifyRecords(ModifyRecordsRequest(saves: [post("late", n: 11)]), scope: .public, ctx)
            return e.drainNotifications().map { "\($0.userRecordName) \($0.notification.recordName ?? "-")" }
        }
        #expect(heard == ["bob late"])
    }
}
