// CloudKit Web Services Reference, "Registering Tokens (tokens/register)"
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/RegisterTokens.html):
// `{"apnsEnvironment", "apnsToken"}`, both required; then the token's webcourierURL long-polls. The
// token is the store's: on PostgreSQL made through one daemon, registered and polled through either.
import Foundation
import Testing

@Suite("CloudKit: Registering Tokens (tokens/register)")
struct RegisterTokensTests {
    /// A token of `user`'s: its `apnsToken` and the webcourier path (`/webcourier?tok=…`).
    private func create(_ user: ConformanceUser) async throws -> (token: String, poll: String) {
        let reply = try await user.web("tokens/create", ["apnsEnvironment": "development"], write: true)
        let token = try #require(reply.body["apnsToken"] as? String, "\(reply)")
        return (token, "/webcourier?tok=\(token)")
    }

    @Test("tokens/register: the creator's token in its environment; anything else BAD_REQUEST",
          arguments: ConformanceBackend.allCases)
    func register(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user(), other = try await backend.user()
        let (token, _) = try await create(user)
        let cases: [(ConformanceUser, [String: Any])] = [
            (user, ["apnsEnvironment": "development"]),
            (user, ["apnsToken": token]),
            (user, ["apnsEnvironment": "production", "apnsToken": token]),
            (user, ["apnsEnvironment": "development", "apnsToken": String(repeating: "0", count: 64)]),
            (other, ["apnsEnvironment": "development", "apnsToken": token]),
            (user, ["apnsEnvironment": "development", "apnsToken": token, "extra": true]),
        ]
        for (who, body) in cases {
            let reply = try await who.web("tokens/register", body, write: true)
            #expect(reply.status == 400 && reply.code == "BAD_REQUEST", "\(body): \(reply)")
        }
        for _ in 0..<2 {
            let ok = try await user.web("tokens/register", ["apnsEnvironment": "development", "apnsToken": token],
                                        write: true)
            #expect(ok.status == 200 && ok.body["apnsToken"] as? String == token
                    && (ok.body["webcourierURL"] as? String)?.contains(token) == true, "\(ok)")
        }
    }

    @Test("the webcourierURL: unregistered 400, forged 404, another user's 403, else 204 after the timeout",
          arguments: ConformanceBackend.allCases)
    func webcourier(_ backend: ConformanceBackend) async throws {
        let user = try await backend.user(), other = try await backend.user()
        let (token, poll) = try await create(user)
        func get(_ path: String, _ headers: [(String, String)] = []) async throws -> Reply {
            try await user.server.request("GET", path, headers: headers, body: [], write: true)
        }
        #expect(try await get(poll).status == 400)
        _ = try await user.web("tokens/register", ["apnsEnvironment": "development", "apnsToken": token], write: true)
        let forged = try await get("/webcourier?tok=" + String(repeating: "f", count: 64))
        #expect(forged.status == 404 && forged.code == "NOT_FOUND", "\(forged)")
        #expect(try await get("/webcourier?tok=" + String(repeating: "f", count: 5000)).status == 404)
        #expect(try await get("/webcourier").status == 404)
        for hostile in [String(token.dropLast()), token + "0", token.uppercased(), String(repeating: "g", count: 64),
                        String(token.dropLast(3)) + "%2F%2E"] {
            #expect(try await get("/webcourier?tok=" + hostile).status == 404, "\(hostile)")
        }
        let theirs = try await get(poll + "&ckAPIToken=\(ConformanceUser.apiToken)&ckWebAuthToken=\(other.token)")
        #expect(theirs.status == 403 && theirs.code == "ACCESS_DENIED", "\(theirs)")
        let bad = try await get(poll, [("Authorization", "Bearer nope")])
        #expect(bad.status == 401, "\(bad)")
        let started = ContinuousClock.now
        let empty = try await get(poll, [("Authorization", "Bearer \(user.token)")])
        #expect(empty.status == 204, "\(empty)")
        #expect(ContinuousClock.now - started >= ConformanceServer.webcourierTimeout * 0.9)
    }

    @Test("a token made on one daemon registers through the other; a save through that one reaches its poll",
          arguments: ConformanceBackend.allCases)
    func acrossDaemons(_ backend: ConformanceBackend) async throws {
        let server = try await backend.server()
        let user = try await backend.user()
        let zone = try await user.makeZone("courier_zone")
        let subscribed = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": ["subscriptionID": "courier", "subscriptionType": "zone",
                                                         "zoneID": zone]]]])
        #expect(subscribed.status == 200, "\(subscribed)")
        // Created on the writing daemon, registered through the other (on PostgreSQL: two daemons).
        let (token, poll) = try await create(user)
        let registered = try await user.web("tokens/register", ["apnsEnvironment": "development",
                                                                "apnsToken": token], write: false)
        #expect(registered.status == 200 && registered.body["apnsToken"] as? String == token, "\(registered)")
        // Nothing fired yet: the first poll on the writing daemon answers 204 after the timeout.
        let first = try await server.request("GET", poll, headers: [], body: [], write: true)
        #expect(first.status == 204, "\(first)")
        let saved = try await user.post("records/modify", ["zoneID": zone, "operations": [
            operation("create", recordDictionary("hello", type: "Message"))]], write: false)
        #expect(saved.status == 200 && saved.records.first?.code == nil, "\(saved)")
        var polled: Reply?
        for _ in 0..<20 where polled?.status != 200 {
            await server.deliverPushes()
            polled = try await server.request("GET", poll, headers: [], body: [], write: true)
        }
        let note = try #require(polled)
        #expect(note.status == 200 && note.body["subscriptionID"] as? String == "courier"
                && note.body["notificationType"] as? String == "recordZone", "\(note)")
    }

    @Test("saves through one daemon while no poll waits: each next poll on the other answers one at once",
          arguments: ConformanceBackend.allCases)
    func betweenPollsAcrossDaemons(_ backend: ConformanceBackend) async throws {
        let server = try await backend.server()
        let user = try await backend.user()
        let zone = try await user.makeZone("between_zone")
        let subscribed = try await user.post("subscriptions/modify", ["operations": [
            ["operationType": "create", "subscription": ["subscriptionID": "between", "subscriptionType": "query",
                                                         "zoneID": zone, "query": ["recordType": "Message"]]]]])
        #expect(subscribed.status == 200, "\(subscribed)")
        // Made and registered through the writing daemon; every save goes through it too, and the
        // client polls only the other (on PostgreSQL: a second daemon, which learns them from the log).
        let (token, poll) = try await create(user)
        let registered = try await user.web("tokens/register", ["apnsEnvironment": "development",
                                                                "apnsToken": token], write: true)
        #expect(registered.status == 200, "\(registered)")
        func save(_ name: String) async throws {
            let saved = try await user.post("records/modify", ["zoneID": zone, "operations": [
                operation("create", recordDictionary(name, type: "Message"))]], write: true)
            #expect(saved.status == 200 && saved.records.first?.code == nil, "\(saved)")
            await server.deliverPushes()
        }
        func next() async throws -> (String?, Bool?) {
            let polled = try await server.request("GET", poll, headers: [], body: [], write: false)
            #expect(polled.status == 200 && polled.body["subscriptionID"] as? String == "between", "\(polled)")
            return (polled.body["recordName"] as? String, polled.body["isPruned"] as? Bool)
        }
        // Two fired before the other daemon ever saw a poll of the token: its first polls answer both
        // (a device nobody listened for would keep only the last).
        try await save("one")
        try await save("two")
        #expect(try await next() == ("one", false))
        #expect(try await next() == ("two", false))
        // Two more while the client handles those and reconnects.
        try await save("three")
        try await save("four")
        #expect(try await next() == ("three", false))
        #expect(try await next() == ("four", false))
    }
}
