import Foundation
import RecordStore
@testable import StoreServer
import Testing
import ZoneCore

/// Web push tokens (tokens/create, tokens/register) are kept in the store: a daemon restarted on the
/// same data directory, from its journal or from a snapshot, still knows them, and their
/// webcourier URLs still receive what the user's subscriptions fire. The store keeps only each
/// token's digest. The notifications waiting for a token do not survive (they are in the daemon's
/// memory); the token's first poll after the restart answers a catch-up instead.
@Suite("Web push tokens survive a restart")
struct WebPushTokenPersistenceTests {
    static let container = "/database/1/iCloud.com.example.tokens/development"

    private func open(_ dir: String, compactAt: Int, _ users: UserRegistry) throws
        -> (EmbeddedStore, StoreAPI, ManualClock) {
        var options = EmbeddedStore.Options(directory: dir)
        options.automaticPush = false
        options.compactionThreshold = compactAt
        let clock = ManualClock()
        let store = try EmbeddedStore(options: options, clock: clock)
        var courier = Webcourier.Options()
        courier.timeout = .milliseconds(200)
        return (store, StoreAPI(store: store, users: users, allowRegister: false, webcourier: courier), clock)
    }

    private func call(_ api: StoreAPI, _ method: String, _ target: String, token: String,
                      _ body: [String: Any] = [:]) async throws -> (Int, [String: Any]) {
        let request = HTTPRequest(method: method, target: target,
                                  headers: HTTPHeaders([("Authorization", "Bearer \(token)"), ("X-Device-ID", "desk")]),
                                  body: method == "GET" ? [] : WireFormat.serialize(body))
        guard case .response(let r) = await api.handle(request) else { throw StoreError(.internalError, "a stream") }
        return (r.status, r.body.isEmpty ? [:] : try WireFormat.parseObject(r.body))
    }

    @Test("created and registered before the restart, polled after it: a save fires to it",
          arguments: [64 << 20, 1024])
    func survivesRestart(compactAt: Int) async throws {
        let dir = NSTemporaryDirectory() + "zonertc-webtokens-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let users = try UserRegistry(directory: nil)
        let alice = try users.add("alice")
        var (store, api, clock) = try open(dir, compactAt: compactAt, users)
        _ = try await call(api, "POST", "\(Self.container)/private/zones/modify", token: alice,
                           ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "inbox"]]]]])
        _ = try await call(api, "POST", "\(Self.container)/private/subscriptions/modify", token: alice, [
            "operations": [["operationType": "create", "subscription": [
                "subscriptionID": "inbox", "subscriptionType": "zone", "zoneID": ["zoneName": "inbox"]]]]])
        let (_, created) = try await call(api, "POST", "\(Self.container)/tokens/create", token: alice,
                                          ["apnsEnvironment": "production"])
        let token = try #require(created["apnsToken"] as? String, "\(created)")
        let (registered, _) = try await call(api, "POST", "\(Self.container)/tokens/register", token: alice,
                                             ["apnsEnvironment": "production", "apnsToken": token])
        #expect(registered == 200)
        // Enough writes to compact the journal into a snapshot when the threshold is small.
        for i in 0..<12 {
            _ = try await call(api, "POST", "\(Self.container)/private/records/modify", token: alice, [
                "zoneID": ["zoneName": "inbox"], "operations": [["operationType": "create", "record": [
                    "recordName": "pad\(i)", "recordType": "Pad",
                    "fields": ["pad": ["value": String(repeating: "x", count: 200)]]]]]])
        }
        if compactAt < 1 << 20 { #expect((store.journalStatistics?.generation ?? 0) >= 1) }
        api.webcourier.stop()
        store.close()

        (store, api, clock) = try open(dir, compactAt: compactAt, users)
        defer { api.webcourier.stop(); store.close() }
        // The digest alone is on disk: the token's text is nowhere in the data directory.
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let bytes = FileManager.default.contents(atPath: dir + "/" + name) ?? Data()
            #expect(bytes.range(of: Data(token.utf8)) == nil, "\(name) holds the token")
        }
        let (again, _) = try await call(api, "POST", "\(Self.container)/tokens/register", token: alice,
                                        ["apnsEnvironment": "production", "apnsToken": token])
        #expect(again == 200)
        // The twelve saves before the restart fired while no one polled; what waited for the token
        // died with the process, so its first poll now answers at once the catch-up: one notification
        // per subscription, pruned (fetch changes), not silence.
        let (caught, catchUp) = try await call(api, "GET", "/webcourier?tok=\(token)", token: alice)
        #expect(caught == 200 && catchUp["subscriptionID"] as? String == "inbox"
                && catchUp["isPruned"] as? Bool == true && catchUp["notificationType"] as? String == "recordZone",
                "\(caught) \(catchUp)")
        _ = try await call(api, "POST", "\(Self.container)/private/records/modify", token: alice, [
            "zoneID": ["zoneName": "inbox"], "operations": [["operationType": "create", "record": [
                "recordName": "hello", "recordType": "Message", "fields": [:]]]]])
        clock.advance(by: .milliseconds(5))
        store.push.pump(now: clock.now())
        // Delivered while no poll waited: the next poll answers it at once.
        let (status, note) = try await call(api, "GET", "/webcourier?tok=\(token)", token: alice)
        #expect(status == 200 && note["subscriptionID"] as? String == "inbox" && note["isPruned"] as? Bool == false,
                "\(status) \(note)")
    }
}
