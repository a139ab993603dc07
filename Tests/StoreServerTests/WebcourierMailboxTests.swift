import Foundation
import RecordStore
@testable import StoreServer
import Testing
import ZoneCore

/// The webcourier between polls (docs/CLOUDKIT.md, "The webcourier URL"): what a user's subscriptions
/// fire while no poll of theirs waits is kept in the daemon's mailbox for the user and answered, at
/// once, by the next polls; the mailbox is bounded (collapse, then drop with `isPruned`); a URL that
/// names no well-formed token is refused before anything waits. Push delivery follows a manual clock.
@Suite("Webcourier: nothing lost between polls, bounded")
struct WebcourierMailboxTests {
    static let container = "/database/1/iCloud.com.example.courier/development"

    private struct Harness {
        let store: EmbeddedStore
        let api: StoreAPI
        let clock: ManualClock
        let alice: String

        func call(_ method: String, _ target: String, _ body: [String: Any] = [:],
                  auth: Bool = true) async throws -> (Int, [String: Any]) {
            let headers = auth ? [("Authorization", "Bearer \(alice)"), ("X-Device-ID", "desk")] : []
            let request = HTTPRequest(method: method, target: target, headers: HTTPHeaders(headers),
                                      body: method == "GET" ? [] : WireFormat.serialize(body))
            guard case .response(let r) = await api.handle(request) else {
                throw StoreError(.internalError, "a stream")
            }
            return (r.status, r.body.isEmpty ? [:] : try WireFormat.parseObject(r.body))
        }

        func post(_ operation: String, _ body: [String: Any]) async throws -> [String: Any] {
            let (status, reply) = try await call("POST", "\(WebcourierMailboxTests.container)/\(operation)", body)
            #expect(status == 200, "\(operation): \(status) \(reply)")
            return reply
        }

        /// The push profile's delay passes: what was fired so far is delivered.
        func deliver() {
            clock.advance(by: .milliseconds(5))
            store.push.pump(now: clock.now())
        }

        /// A token of Alice's, created and registered, and its poll target.
        func token() async throws -> String {
            let created = try await post("tokens/create", ["apnsEnvironment": "development"])
            let token = try #require(created["apnsToken"] as? String)
            _ = try await post("tokens/register", ["apnsEnvironment": "development", "apnsToken": token])
            return "/webcourier?tok=\(token)"
        }

        func save(_ name: String, operation: String = "create") async throws {
            let reply = try await post("private/records/modify", ["zoneID": ["zoneName": "inbox"], "operations": [
                ["operationType": operation, "record": ["recordName": name, "recordType": "Message", "fields": [:]]]]])
            #expect((reply["records"] as? [[String: Any]])?.first?["serverErrorCode"] == nil, "\(reply)")
        }
    }

    /// Alice, her zone `inbox`, and a query subscription on its messages (each notification names its record).
    private func harness(maxQueued: Int = 64, timeout: Duration = .seconds(30)) async throws -> Harness {
        let clock = ManualClock()
        let store = try EmbeddedStore(options: .inMemoryForTests, clock: clock)
        let users = try UserRegistry(directory: nil)
        var courier = Webcourier.Options()
        courier.maxQueued = maxQueued
        courier.timeout = timeout
        let api = StoreAPI(store: store, users: users, allowRegister: false, webcourier: courier)
        let h = Harness(store: store, api: api, clock: clock, alice: try users.add("alice"))
        _ = try await h.post("private/zones/modify",
                             ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "inbox"]]]]])
        let subscription: [String: Any] = [
            "subscriptionID": "messages", "subscriptionType": "query", "zoneID": ["zoneName": "inbox"],
            "query": ["recordType": "Message"]]
        _ = try await h.post("private/subscriptions/modify",
                             ["operations": [["operationType": "create", "subscription": subscription]]])
        return h
    }

    @Test("fired between polls: each next poll answers one at once, oldest first, none lost")
    func betweenPolls() async throws {
        let h = try await harness()
        defer { h.api.webcourier.stop(); h.store.close() }
        let poll = try await h.token()
        // One answered by a poll that waits for it…
        async let waiting = h.call("GET", poll, auth: false)
        try await h.save("m1")
        h.deliver()
        let (s1, n1) = try await waiting
        #expect(s1 == 200 && n1["recordName"] as? String == "m1", "\(s1) \(n1)")
        // …then three while the client handles it and reconnects: no poll waits, nothing is lost.
        for name in ["m2", "m3", "m4"] {
            try await h.save(name)
            h.deliver()
        }
        #expect(h.api.webcourier.waiting == 0 && h.api.webcourier.mailboxCount(user: "alice") == 4)
        var names: [String] = []
        for _ in 0..<3 {
            let (status, note) = try await h.call("GET", poll, auth: false)
            #expect(status == 200 && note["isPruned"] as? Bool == false, "\(status) \(note)")
            names.append(note["recordName"] as? String ?? "?")
        }
        #expect(names == ["m2", "m3", "m4"])
        #expect(h.api.webcourier.dropped == 0)
    }

    @Test("a full mailbox: the same record's notification gives way to the newer; else the oldest drops, isPruned")
    func bound() async throws {
        let h = try await harness(maxQueued: 3)
        defer { h.api.webcourier.stop(); h.store.close() }
        let poll = try await h.token()
        for i in 1...5 {
            try await h.save("r\(i)")
            h.deliver()
        }
        #expect(h.api.webcourier.dropped == 2)
        var answers: [(String, Bool)] = []
        for _ in 0..<3 {
            let (status, note) = try await h.call("GET", poll, auth: false)
            #expect(status == 200, "\(status) \(note)")
            answers.append((note["recordName"] as? String ?? "?", note["isPruned"] as? Bool ?? false))
        }
        // r1 and r2 were dropped: the first answer after them says so (fetch changes).
        #expect(answers.map(\.0) == ["r3", "r4", "r5"] && answers.map(\.1) == [true, false, false], "\(answers)")
        // Full again: r4 changes, and its newer notification takes the older one's place.
        try await h.save("r4", operation: "forceUpdate")
        h.deliver()
        #expect(h.api.webcourier.coalesced == 1 && h.api.webcourier.dropped == 2)
        let (status, again) = try await h.call("GET", poll, auth: false)
        #expect(status == 200 && again["recordName"] as? String == "r4" && again["isPruned"] as? Bool == false,
                "\(status) \(again)")
    }

    @Test("hostile webcourier URLs: any length or alphabet is 404 and nothing waits")
    func hostileURLs() async throws {
        let h = try await harness(timeout: .seconds(30))
        defer { h.api.webcourier.stop(); h.store.close() }
        let poll = try await h.token()
        let token = String(poll.dropFirst("/webcourier?tok=".count))
        let targets = [
            "/webcourier", "/webcourier?tok=", "/webcourier?tok=\(token.dropLast())", "/webcourier?tok=\(token)0",
            "/webcourier?tok=\(token.uppercased())", "/webcourier?tok=" + String(repeating: "g", count: 64),
            "/webcourier?tok=" + String(repeating: "f", count: 100_000), "/webcourier?tok=\(token)&tok=\(token)",
            "/webcourier?tok=" + String(token.dropLast(2)) + "%00%00",
            "/webcourier?tok=" + String(repeating: "é", count: 32),
        ]
        for target in targets {
            let (status, _) = try await h.call("GET", target, auth: false)
            #expect(status == 404, "\(target.prefix(80))")
        }
        #expect(h.api.webcourier.waiting == 0)
        // The token itself still polls (a notification waits, so it answers at once).
        try await h.save("m1")
        h.deliver()
        let (status, note) = try await h.call("GET", poll, auth: false)
        #expect(status == 200 && note["recordName"] as? String == "m1", "\(status) \(note)")
    }
}
