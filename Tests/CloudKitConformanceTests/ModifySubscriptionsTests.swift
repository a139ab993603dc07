// CloudKit Web Services Reference, "Modifying Subscriptions (subscriptions/modify)", "Fetching
// Subscriptions (subscriptions/list)" and "Fetching Subscriptions by Identifier
// (subscriptions/lookup)" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// ModifySubscriptions.html, GetSubscriptions.html, LookupSubscriptionsbyID.html), with the
// Subscription Dictionary of "Types and Dictionaries": every key kept and answered back, on
// every backend (the PostgreSQL daemons answer reads from the log the other wrote).
import Foundation
import Testing

@Suite("CloudKit: Modifying, Fetching and Looking up Subscriptions (subscriptions/modify|list|lookup)")
struct ModifySubscriptionsTests {
    static var querySubscription: [String: Any] {
        ["subscriptionID": "big-notes", "subscriptionType": "query", "zoneID": ["zoneName": "zone_c"],
         "query": ["recordType": "Note", "filterBy": [
            ["comparator": "GREATER_THAN", "fieldName": "n", "fieldValue": ["value": 10, "type": "INT64"]]],
                   "sortBy": [["fieldName": "n", "ascending": false]]],
         "firesOn": ["create", "delete"], "firesOnce": true,
         "notificationInfo": ["alertBody": "A big note", "shouldBadge": true, "alertLocalizationArgs": ["a"]]]
    }

    @Test("a query subscription keeps every key; list and lookup answer it; a missing one: NOT_FOUND",
          arguments: ConformanceBackend.allCases)
    func keepsEveryKey(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        _ = try await user.makeZone()
        let saved = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": Self.querySubscription]]])
        let sub = try #require((saved.body["subscriptions"] as? [[String: Any]])?.first, "\(saved)")
        #expect(sub["serverErrorCode"] == nil, "\(saved)")
        for answer in [sub] + (try await user.post("subscriptions/list", [:]).body["subscriptions"]
                               as? [[String: Any]] ?? []) {
            #expect(answer["subscriptionType"] as? String == "query")
            #expect(answer["firesOn"] as? [String] == ["create", "delete"])
            #expect(answer["firesOnce"] as? Bool == true)
            #expect((answer["zoneID"] as? [String: Any])?["zoneName"] as? String == "zone_c")
            let query = answer["query"] as? [String: Any]
            #expect((query?["filterBy"] as? [[String: Any]])?.first?["comparator"] as? String == "GREATER_THAN")
            #expect((query?["sortBy"] as? [[String: Any]])?.first?["ascending"] as? Bool == false)
            let info = answer["notificationInfo"] as? [String: Any]
            #expect(info?["alertBody"] as? String == "A big note" && info?["shouldBadge"] as? Bool == true,
                    "\(answer)")
        }
        let looked = try await user.post("subscriptions/lookup", ["subscriptions": [
            ["subscriptionID": "big-notes"], ["subscriptionID": "missing"]]])
        let found = looked.body["subscriptions"] as? [[String: Any]] ?? []
        #expect(found.count == 2 && found[0]["subscriptionID"] as? String == "big-notes", "\(looked)")
        #expect(found.last?["serverErrorCode"] as? String == "NOT_FOUND"
                && found.last?["subscriptionID"] as? String == "missing", "\(looked)")
    }

    @Test("database and zone subscriptions are answered as before; a zoneWide zone subscription is the database's",
          arguments: ConformanceBackend.allCases)
    func databaseAndZone(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let zone = try await user.makeZone()
        let reply = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": ["subscriptionID": "db", "subscriptionType": "database"]],
            ["operationType": "create", "subscription": ["subscriptionID": "z", "subscriptionType": "zone",
                                                         "zoneID": zone]],
            ["operationType": "create", "subscription": ["subscriptionID": "wide", "subscriptionType": "zone",
                                                         "zoneWide": true]]]])
        let subs = reply.body["subscriptions"] as? [[String: Any]] ?? []
        #expect(subs.map { $0["subscriptionType"] as? String } == ["database", "zone", "database"], "\(reply)")
    }

    @Test("refused: a query subscription in the shared database, a database one in the public database",
          arguments: ConformanceBackend.allCases)
    func refused(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        let shared = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": ["subscriptionID": "q", "subscriptionType": "query",
                                                         "query": ["recordType": "Note"]]]]], database: "shared")
        #expect((shared.body["subscriptions"] as? [[String: Any]])?.first?.code == "BAD_REQUEST", "\(shared)")
        let pub = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": ["subscriptionID": "d", "subscriptionType": "database"]]]],
                                      database: "public")
        #expect((pub.body["subscriptions"] as? [[String: Any]])?.first?.code == "BAD_REQUEST", "\(pub)")
    }

    @Test("unknown keys, wrong shapes and hostile sizes are BAD_REQUEST naming what is wrong, nothing saved",
          arguments: ConformanceBackend.allCases)
    func malformed(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user()
        func op(_ sub: [String: Any]) -> [String: Any] {
            ["operations": [["operationType": "create", "subscription": sub]]]
        }
        var bogus = Self.querySubscription
        bogus["bogus"] = 1
        var zoneFires: [String: Any] = ["subscriptionID": "z", "subscriptionType": "zone", "zoneID": ["zoneName": "a"]]
        zoneFires["firesOn"] = ["create"]
        var badFires = Self.querySubscription
        badFires["firesOn"] = ["explode"]
        var hugeQuery = Self.querySubscription
        hugeQuery["query"] = ["recordType": "Note", "filterBy": Array(repeating:
            ["comparator": "EQUALS", "fieldName": "n", "fieldValue": ["value": 1]], count: 1000)]
        var loud = Self.querySubscription
        loud["notificationInfo"] = ["alertBody": String(repeating: "x", count: 10_000)]
        var infoKey = Self.querySubscription
        infoKey["notificationInfo"] = ["alertTitle": "t"]
        let cases: [(String, [String: Any])] = [
            ("bogus", op(bogus)),
            ("firesOn", op(zoneFires)),
            ("explode", op(badFires)),
            ("filterBy", op(hugeQuery)),
            ("4096", op(loud)),
            ("alertTitle", op(infoKey)),
            ("extra", ["operations": [], "extra": true]),
            ("operationType", ["operations": [["operationType": "upsert", "subscription": Self.querySubscription]]]),
        ]
        for (name, body) in cases {
            let reply = try await user.post("subscriptions/modify", body)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST" && reply.reason.contains(name),
                    "\(name): \(reply)")
        }
        let lookup = try await user.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": "a", "x": 1]]])
        #expect(lookup.status == 400 && lookup.reason.contains("x"), "\(lookup)")
        let listed = try await user.post("subscriptions/list", [:])
        #expect((listed.body["subscriptions"] as? [Any])?.isEmpty == true, "\(listed)")
    }
}
