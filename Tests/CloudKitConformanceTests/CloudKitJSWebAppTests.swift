// A web app as CloudKit JS 1.x drives CloudKit Web Services, over plain HTTP against the daemon:
// query-string credentials (ckAPIToken + ckSession), text/plain JSON bodies, the 421 → sign-in →
// web auth token flow ("Accessing CloudKit Using an API Token", SettingUpWebServices.html),
// users/current (GetCurrentUser.html), tokens/create + tokens/register (CreateTokens.html,
// RegisterTokens.html) and the webcourier long-poll receiving a notification when another user's
// save fires the app user's subscription; then, as the app handles it and polls again, two more
// saves fired while it was not polling, each answered at once by the next poll.
import Foundation
import Net
import ZoneCore
import RecordStore
@testable import StoreServer
import Testing

@Suite("CloudKit: a CloudKit JS web app, from sign-in to a notification")
struct CloudKitJSWebAppTests {
    static let apiToken = "web-app-api-token-0123456789"
    static let container = "/database/1/iCloud.com.example.webapp/development"

    @Test("421, sign-in page, ckWebAuthToken, users/current, a subscription, tokens, a long-poll answered by a save")
    func webApp() async throws {
        var options = EmbeddedStore.Options()
        options.pushProfile = .lan
        // Push delivery follows a manual clock: each save's notification is delivered when the test
        // says (`deliver`), so "fired while the app was not polling" is certain, not a race.
        options.automaticPush = false
        let clock = ManualClock()
        let store = try EmbeddedStore(options: options, clock: clock)
        /// The push profile's delay passes: what the saves so far fired is delivered.
        func deliver() {
            clock.advance(by: .milliseconds(5))
            store.push.pump(now: clock.now())
        }
        var courier = Webcourier.Options()
        courier.timeout = .seconds(10)
        let api = StoreAPI(store: store, users: try UserRegistry(directory: nil), allowRegister: true,
                           apiTokens: APITokens([Self.apiToken]), webcourier: courier)
        let listen = try Endpoint(parsing: "127.0.0.1:0")
        let daemon = try StoreDaemon(api: api, options: StoreDaemon.Options(listen: listen))
        try daemon.start()
        defer { api.webcourier.stop(); daemon.stop(); store.close() }
        let server = daemon.endpoint

        /// A CloudKit JS request: credentials in the query string, a text/plain JSON body.
        func call(_ method: String, _ path: String, session: String?, _ body: [String: Any]? = nil) async throws
            -> RawResponse {
            var target = "\(Self.container)/\(path)?ckAPIToken=\(Self.apiToken)"
            if let session { target += "&ckSession=\(session)" }
            return try await rawHTTP(server, method, target, headers: [("Content-Type", "text/plain")],
                                     body: body.map { WireFormat.serialize($0) } ?? [])
        }

        /// The sign-in a browser goes through: the 421's redirectURL, its page, its form, the redirect back.
        func signIn(_ name: String) async throws -> String {
            let needed = try await call("GET", "public/users/current", session: nil)
            #expect(needed.status == 421 && needed.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
            let redirect = try #require(needed.json["redirectURL"] as? String, "\(needed.text)")
            let url = try #require(URL(string: redirect))
            #expect(url.host == "127.0.0.1" && url.path == "/auth/signin", "\(redirect)")
            let page = try await rawHTTP(server, "GET", url.path + "?redirect=%2Fapp")
            #expect(page.status == 200 && page.headers["Content-Type"]?.hasPrefix("text/html") == true
                    && page.text.contains("<form"))
            let form = try await rawHTTP(server, "POST", "/auth/signin",
                                         headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                         body: Array("userName=\(name)&redirect=%2Fapp".utf8))
            #expect(form.status == 303, "\(form.status) \(form.text)")
            let location = try #require(form.headers["Location"])
            let back = try #require(URLComponents(string: location))
            #expect(back.path == "/app")
            return try #require(back.queryItems?.first { $0.name == "ckWebAuthToken" }?.value)
        }

        let alice = try await signIn("alice"), bob = try await signIn("bob")
        let me = try await call("GET", "public/users/current", session: alice)
        #expect(me.status == 200 && me.json["userRecordName"] as? String == "alice", "\(me.text)")

        // Alice's zone, shared with Bob, and her zone subscription on it.
        let zone: [String: Any] = ["zoneName": "Inbox"]
        let made = try await call("POST", "private/zones/modify", session: alice,
                                  ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        #expect(made.status == 200, "\(made.text)")
        let shared = try await call("POST", "private/shares/create", session: alice, [
            "zoneID": zone, "participants": [["userRecordName": "bob", "permission": "readWrite"]]])
        #expect(shared.status == 200, "\(shared.text)")
        let theirs: [String: Any] = ["zoneName": "Inbox", "ownerRecordName": "alice"]
        #expect(try await call("POST", "shared/shares/accept", session: bob, ["zoneID": theirs]).status == 200)
        let subscribed = try await call("POST", "private/subscriptions/modify", session: alice, [
            "operations": [["operationType": "create",
                            "subscription": ["subscriptionID": "inbox", "subscriptionType": "zone", "zoneID": zone]]]])
        #expect(subscribed.status == 200, "\(subscribed.text)")

        // Push for the web: a token, registered, and its long-poll.
        let created = try await call("POST", "tokens/create", session: alice, ["apnsEnvironment": "development"])
        let token = try #require(created.json["apnsToken"] as? String, "\(created.text)")
        let courierText = try #require(created.json["webcourierURL"] as? String)
        let courierURL = try #require(URL(string: courierText))
        let registered = try await call("POST", "tokens/register", session: alice,
                                        ["apnsEnvironment": "development", "apnsToken": token])
        #expect(registered.status == 200, "\(registered.text)")
        let pollTarget = courierURL.path + "?" + (courierURL.query ?? "")
        let refused = try await rawHTTP(server, "GET", pollTarget + "&ckAPIToken=\(Self.apiToken)&ckSession=\(bob)")
        #expect(refused.status == 403, "\(refused.text)")

        async let polled = rawHTTP(server, "GET", pollTarget)
        let saved = try await call("POST", "shared/records/modify", session: bob, [
            "zoneID": theirs, "operations": [["operationType": "create",
                                              "record": ["recordName": "hello", "recordType": "Message",
                                                         "fields": ["text": ["value": "hi alice"]]]]]])
        #expect(saved.status == 200 && (saved.json["records"] as? [[String: Any]])?.first?["serverErrorCode"] == nil,
                "\(saved.text)")
        deliver()
        let note = try await polled
        #expect(note.status == 200, "\(note.status) \(note.text)")
        #expect(note.json["subscriptionID"] as? String == "inbox")
        #expect(note.json["notificationType"] as? String == "recordZone")
        #expect((note.json["zoneID"] as? [String: Any])?["zoneName"] as? String == "Inbox", "\(note.text)")
        #expect(note.json["containerIdentifier"] as? String == "iCloud.com.example.webapp")
        #expect(note.json["isPruned"] as? Bool == false)

        // The app handles the notification; meanwhile Bob saves twice and both are delivered while no
        // poll waits. Its next two polls answer them at once, oldest first.
        for name in ["second", "third"] {
            let more = try await call("POST", "shared/records/modify", session: bob, [
                "zoneID": theirs, "operations": [["operationType": "create",
                                                  "record": ["recordName": name, "recordType": "Message",
                                                             "fields": ["text": ["value": name]]]]]])
            #expect(more.status == 200, "\(more.text)")
            deliver()
        }
        #expect(api.webcourier.waiting == 0)
        var seen = [try #require(Int(note.json["notificationID"] as? String ?? ""), "\(note.text)")]
        for _ in 0..<2 {
            let next = try await rawHTTP(server, "GET", pollTarget)
            #expect(next.status == 200 && next.json["subscriptionID"] as? String == "inbox"
                    && next.json["isPruned"] as? Bool == false, "\(next.status) \(next.text)")
            seen.append(try #require(Int(next.json["notificationID"] as? String ?? ""), "\(next.text)"))
        }
        #expect(seen == seen.sorted() && Set(seen).count == 3, "\(seen)")
    }
}
