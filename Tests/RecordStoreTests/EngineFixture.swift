import ZoneCore
@testable import RecordStore

/// What the engine's outbox and notification tests start from: alice's zone `room_a`, a database
/// subscription, and a second device of hers ("l", the listener) for the engine to notify.
enum EngineFixture {
    static let room = ZoneID(zoneName: "room_a", ownerName: "alice")
    static let author = RequestContext(user: "alice", deviceID: "w", now: Instant(nanosecondsSinceEpoch: 1_000_000_000))
    static var listener: RequestContext {
        var listener = author
        listener.deviceID = "l"
        return listener
    }

    static func roomWithListener() throws -> StoreEngine {
        var engine = StoreEngine()
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, author)
        _ = try engine.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)], delete: [],
                                           scope: .private, author)
        try engine.registerDevice(listener)
        return engine
    }
}
