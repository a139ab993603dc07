import Testing
import RecordStore
import ZoneCore

/// docs/STORE.md "Subscriptions and push" and "Throttling and errors".
@Suite("Contract: subscriptions, push, throttling")
struct PushContractTests {
    let room = ZoneID(zoneName: "room_a")
    let shared = ZoneID(zoneName: "room_a", ownerName: "alice")

    @Test("query and zone subscriptions are refused on the shared database", arguments: ContractBackend.allCases)
    func sharedDatabaseSubscriptions(_ backend: ContractBackend) async throws {
        let store = try await backend.makeStore()
        let bob = store.client("bob")
        let r = try await bob.modifySubscriptions(save: [
            Subscription(subscriptionID: "db", kind: .database),
            Subscription(subscriptionID: "zone", kind: .zone(shared)),
            Subscription(subscriptionID: "query", kind: .query(recordType: "Note", zoneID: nil)),
        ], delete: [], scope: .shared)
        #expect(r[0].error == nil)
        #expect(r[1].error?.code == .invalidArguments)
        #expect(r[2].error?.code == .invalidArguments)
        #expect(try await bob.listSubscriptions(scope: .shared).map(\.subscriptionID) == ["db"])
        let d = try await bob.modifySubscriptions(save: [], delete: ["db", "nope"], scope: .shared)
        #expect(d[0].error == nil && d[1].error?.code == .unknownItem)
    }

    @Test("notifications reach every subscribed device except the author's, as hints only",
          arguments: ContractBackend.allCases)
    func notificationsSkipAuthor(_ backend: ContractBackend) async throws {
        let store = try await backend.makeStore()
        let aliceA = store.client("alice", device: "a-phone")
        let aliceB = store.client("alice", device: "a-tablet")
        let bob = store.client("bob", device: "b-phone")
        _ = try await aliceA.modifyZones(save: [room], delete: [], scope: .private)
        _ = try await aliceA.createShare(zone: room, publicPermission: .none, participants: ["bob": .readWrite])
        _ = try await bob.acceptShare(zone: shared)
        _ = try await aliceA.modifySubscriptions(save: [Subscription(subscriptionID: "private-db", kind: .database)],
                                                 delete: [], scope: .private)
        _ = try await bob.modifySubscriptions(save: [Subscription(subscriptionID: "shared-db", kind: .database)],
                                              delete: [], scope: .shared)
        let streamA = try await aliceA.notifications()
        let streamB = try await aliceB.notifications()
        let streamBob = try await bob.notifications()

        try await aliceA.save([record("offer")])
        #expect(await store.deliverPushes() == 2)
        var itB = streamB.makeAsyncIterator()
        var itBob = streamBob.makeAsyncIterator()
        let nB = try #require(await itB.next())
        #expect(nB.subscriptionID == "private-db" && nB.databaseScope == .private && nB.zoneID == nil)
        let nBob = try #require(await itBob.next())
        #expect(nBob.subscriptionID == "shared-db" && nBob.databaseScope == .shared)

        // Bob writes: both of Alice's devices hear of it, Bob's own device does not.
        try await bob.save([record("answer", in: shared)], scope: .shared)
        #expect(await store.deliverPushes() == 2)
        var itA = streamA.makeAsyncIterator()
        #expect(try #require(await itA.next()).subscriptionID == "private-db")
        #expect(try #require(await itB.next()).subscriptionID == "private-db")
    }

    @Test("zone subscriptions carry the zone as a hint", arguments: ContractBackend.allCases)
    func zoneSubscriptionHint(_ backend: ContractBackend) async throws {
        let store = try await backend.makeStore()
        let writer = store.client("alice", device: "w")
        let listener = store.client("alice", device: "l")
        _ = try await writer.modifyZones(save: [room], delete: [], scope: .private)
        let r = try await writer.modifySubscriptions(save: [Subscription(subscriptionID: "z", kind: .zone(room))],
                                                     delete: [], scope: .private)
        #expect(r[0].error == nil)
        let stream = try await listener.notifications()
        try await writer.save([record("x")])
        #expect(await store.deliverPushes() == 1)
        var it = stream.makeAsyncIterator()
        #expect(try #require(await it.next()).zoneID == shared)
    }

    @Test("rate limiting: requestRateLimited with retryAfter, then served again", arguments: ContractBackend.allCases)
    func rateLimited(_ backend: ContractBackend) async throws {
        var config = StoreConfiguration()
        var throttle = ThrottlePolicy()
        throttle.requestsPerSecond = 2
        throttle.burst = 2
        config.throttle = throttle
        let store = try await backend.makeStore(configuration: config)
        let alice = store.client("alice")
        _ = try await alice.listZones(scope: .private)
        _ = try await alice.listZones(scope: .private)
        let e = await storeError { _ = try await alice.listZones(scope: .private) }
        #expect(e?.code == .requestRateLimited)
        let wait = try #require(e?.retryAfter)
        #expect(wait >= 20 && wait <= 30)
        store.clock.advance(by: .seconds(Int64(wait.rounded(.up))))
        _ = try await alice.listZones(scope: .private)
    }

    @Test("injected serviceUnavailable and zoneBusy", arguments: ContractBackend.allCases)
    func injectedErrors(_ backend: ContractBackend) async throws {
        var config = StoreConfiguration()
        var throttle = ThrottlePolicy()
        throttle.injectZoneBusy = 1
        config.throttle = throttle
        let busy = try await backend.makeStore(configuration: config).client("alice")
        let e = await storeError { _ = try await busy.lookupRecords([RecordID(recordName: "x")], scope: .private) }
        #expect(e?.code == .zoneBusy)
        #expect(e?.retryAfter == nil)

        throttle = ThrottlePolicy()
        throttle.injectServiceUnavailable = 1
        config.throttle = throttle
        let down = try await backend.makeStore(configuration: config).client("alice")
        let e2 = await storeError { _ = try await down.listZones(scope: .private) }
        #expect(e2?.code == .serviceUnavailable)
        #expect(e2?.retryAfter != nil)
    }
}
