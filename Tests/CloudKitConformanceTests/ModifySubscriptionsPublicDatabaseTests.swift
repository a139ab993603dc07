// CloudKit Web Services Reference, "Modifying Subscriptions (subscriptions/modify)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifySubscriptions.html),
// whose `database` may be `public`, with "Fetching Subscriptions" and "Fetching Subscriptions by
// Identifier" (GetSubscriptions.html, LookupSubscriptionsbyID.html): query subscriptions in the
// public database, each user's own, firing for any user's public writes to every subscriber's push
// stream and webcourier URL. On PostgreSQL the subscription is made through one daemon and fired by
// a save through the other.
import Foundation
import RecordStore
import Testing

@Suite("CloudKit: Modifying Subscriptions in the public database (subscriptions/modify|list|lookup)")
struct ModifySubscriptionsPublicDatabaseTests {
    static func subscribe(_ user: ConformanceUser, _ subscription: [String: Any]) async throws -> [String: Any] {
        // Through the daemon that answers reads: the writes below go through the other.
        let reply = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": subscription]]], database: "public", write: false)
        return try #require((reply.body["subscriptions"] as? [[String: Any]])?.first, "\(reply)")
    }

    static var bigNotes: [String: Any] {
        ["subscriptionID": "big-notes", "subscriptionType": "query",
         "query": ["recordType": "Note", "filterBy": [
            ["comparator": "GREATER_THAN", "fieldName": "n", "fieldValue": ["value": 10, "type": "INT64"]]]]]
    }

    @Test("query subscriptions only, each user's own: saved, listed, looked up; zone and database ones refused",
          arguments: ConformanceBackend.allCases)
    func saved(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user(), other = try await backend.user()
        let sub = try await Self.subscribe(user, Self.bigNotes)
        #expect(sub["serverErrorCode"] == nil && sub["subscriptionType"] as? String == "query", "\(sub)")
        for refused: [String: Any] in [["subscriptionID": "z", "subscriptionType": "zone",
                                        "zoneID": ["zoneName": "_defaultZone"]],
                                       ["subscriptionID": "d", "subscriptionType": "database"],
                                       ["subscriptionID": "q", "subscriptionType": "query",
                                        "zoneID": ["zoneName": "elsewhere"], "query": ["recordType": "Note"]]] {
            let answer = try await Self.subscribe(user, refused)
            #expect(["BAD_REQUEST", "ZONE_NOT_FOUND"].contains(answer.code ?? ""), "\(answer)")
        }
        let listed = try await user.post("subscriptions/list", [:], database: "public")
        #expect((listed.body["subscriptions"] as? [[String: Any]])?.map { $0["subscriptionID"] as? String }
                == ["big-notes"], "\(listed)")
        let looked = try await user.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": "big-notes"]]],
                                         database: "public")
        #expect((looked.body["subscriptions"] as? [[String: Any]])?.first?["query"] != nil, "\(looked)")
        // Another user's public database holds none of it; the private database neither.
        let theirs = try await other.post("subscriptions/list", [:], database: "public")
        #expect((theirs.body["subscriptions"] as? [Any])?.isEmpty == true, "\(theirs)")
        let privately = try await user.post("subscriptions/list", [:])
        #expect((privately.body["subscriptions"] as? [Any])?.isEmpty == true, "\(privately)")
        let anonymous = try await user.web("public/subscriptions/list", [:], webToken: .some(nil))
        #expect(anonymous.status == 421 && anonymous.code == "AUTHENTICATION_REQUIRED", "\(anonymous)")
    }

    @Test("any user's public save fires each subscriber's matching query subscription, stream and webcourier alike",
          arguments: ConformanceBackend.allCases)
    func fires(_ backend: ConformanceBackend) async throws {
        let server = try await backend.server()
        let alice = try await backend.user(device: "alice-phone"), bob = try await backend.user(device: "bob-phone")
        let carol = try await backend.user()
        _ = try await Self.subscribe(alice, Self.bigNotes)
        _ = try await Self.subscribe(bob, ["subscriptionID": "posters", "subscriptionType": "query",
                                           "query": ["recordType": "Poster"], "firesOn": ["create"],
                                           "firesOnce": true])
        let aliceStream = PushInbox(try await server.pushStream(user: alice.name, device: alice.device))
        let bobStream = PushInbox(try await server.pushStream(user: bob.name, device: bob.device))
        // Alice's web client: a token made and registered on the writing daemon, polled there.
        let created = try await alice.web("tokens/create", ["apnsEnvironment": "development"], write: true)
        let token = try #require(created.body["apnsToken"] as? String, "\(created)")
        let registered = try await alice.web("tokens/register", ["apnsEnvironment": "development",
                                                                 "apnsToken": token], write: true)
        #expect(registered.status == 200, "\(registered)")

        func write(_ operations: [[String: Any]]) async throws {
            let reply = try await carol.post("records/modify", ["operations": operations], database: "public")
            #expect(reply.status == 200 && reply.records.allSatisfy { $0["serverErrorCode"] == nil }, "\(reply)")
            await server.deliverPushes()
        }
        func note(_ name: String, _ n: Int) -> [String: Any] {
            recordDictionary(name, fields: ["n": value(n, "INT64")])
        }
        try await write([operation("create", note("big", 20)), operation("create", note("small", 1)),
                         operation("create", recordDictionary("p1", type: "Poster"))])

        let first = try #require(await aliceStream.next(), "alice was not told of the big note")
        #expect(first.subscriptionID == "big-notes" && first.databaseScope == .public && first.recordName == "big"
                && first.queryNotificationReason == .recordCreated && first.zoneID == ZoneID.publicZone, "\(first)")
        let poster = try #require(await bobStream.next(), "bob was not told of the poster")
        #expect(poster.subscriptionID == "posters" && poster.recordName == "p1", "\(poster)")

        // The webcourier URL answers the same notification (a 204 means: poll again).
        var polled: Reply?
        for _ in 0..<20 where polled?.status != 200 {
            polled = try await server.request("GET", "/webcourier?tok=\(token)", headers: [], body: [], write: true)
            if polled?.status != 200 { await server.deliverPushes() }
        }
        let courier = try #require(polled)
        #expect(courier.status == 200 && courier.body["subscriptionID"] as? String == "big-notes"
                && courier.body["notificationType"] as? String == "query"
                && courier.body["recordName"] as? String == "big"
                && courier.body["isPublicDatabase"] as? Bool == true, "\(courier)")

        // Updated (matching before or after) and deleted; the small note never matched, so it never fires.
        let looked = try await carol.post("records/lookup", ["records": [["recordName": "big"]]], database: "public")
        let tag = try #require(looked.records.first?.tag, "\(looked)")
        try await write([operation("update", ["recordName": "big", "recordChangeTag": tag,
                                              "fields": ["n": value(5, "INT64")]]),
                         operation("forceDelete", ["recordName": "small"]),
                         operation("create", recordDictionary("p2", type: "Poster"))])
        let updated = try #require(await aliceStream.next(), "alice was not told of the update")
        #expect(updated.recordName == "big" && updated.queryNotificationReason == .recordUpdated, "\(updated)")
        try await write([operation("create", note("bigger", 99))])
        let third = try #require(await aliceStream.next(), "alice was not told of the bigger note")
        #expect(third.recordName == "bigger" && third.queryNotificationReason == .recordCreated, "\(third)")

        // Bob's subscription fired once and is gone: the second poster told him nothing.
        let gone = try await bob.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": "posters"]]],
                                      database: "public")
        #expect((gone.body["subscriptions"] as? [[String: Any]])?.first?.code == "NOT_FOUND", "\(gone)")
        try await write([operation("create", recordDictionary("p3", type: "Poster"))])
        #expect(await bobStream.next(within: .milliseconds(50)) == nil)
    }
}
