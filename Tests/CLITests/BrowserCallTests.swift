import Browser
import Foundation
import Glibc
import Net
import RecordStore
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// Issue 15: two headless Chromium pages call each other through a real `zonertc store serve`, signaling
/// with the call page's JavaScript (the second implementation of docs/SIGNALING.md). Each page POSTs its
/// window.zonertcResult to /call/report; the test waits on the daemon's "call report" log lines (no sleeps),
/// then reads both reports. Every run is bounded (the pages give up after 40 s, the test after 55 s) and
/// every process is stopped by its PID. Without Chromium the suite is skipped, under ZONERTC_CI=1 it fails.
@Suite("The call page in headless Chromium", .serialized,
       .enabled(if: ExternalProgram.underCI || (try? HeadlessChromium.locate()) != nil, "Chromium is not installed"))
struct BrowserCallTests {
    /// A daemon and the pages of one call.
    final class BrowserCall: @unchecked Sendable {
        let daemon: ProcessWatch
        let endpoint: Endpoint
        let room: String
        var tokens: [String: String] = [:]
        var browsers: [ProcessWatch] = []
        /// The user of each browser's page, in the order of `browsers`.
        var pageUsers: [String] = []
        /// Other processes of the call (`zonertc peer`), stopped by PID with the browsers.
        var peers: [ProcessWatch] = []
        var profiles: [String] = []

        init(daemonArguments: [String] = [], room: String = "room_br0wser1") throws {
            self.room = room
            daemon = try spawnWatched([ZonertcProcess.binary.path, "store", "serve", "--memory",
                                       "--listen", "127.0.0.1:0"] + daemonArguments)
            daemon.wait(within: .seconds(20)) { $0.stdout.contains("listening on") }
            guard let range = daemon.stdout.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression) else {
                kill(daemon.pid, SIGKILL)
                throw SpawnFailure("the daemon did not start: \(daemon.stderr)")
            }
            endpoint = try Endpoint(parsing: String(daemon.stdout[range]))
        }

        func register(_ users: String...) async throws {
            for user in users { tokens[user] = try await RemoteStoreClient.register(userName: user, at: endpoint) }
        }

        /// Opens the call page of `me` in a headless Chromium of its own (a fresh profile directory);
        /// `query` ends the page's query (frames, timeout, send), `fakeVideo` is what its camera captures.
        func open(me: String, remote: String, owner: Bool, query: String = "&frames=30&timeout=40",
                  fakeVideo: String? = nil) throws {
            let chromium = try HeadlessChromium.locate()
            let profile = NSTemporaryDirectory() + "zonertc-chromium-\(UUID().uuidString)"
            profiles.append(profile)
            let token = tokens[me]!.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = "http://\(endpoint)/call?room=\(room)&me=\(me)&remote=\(remote)\(owner ? "&owner=1" : "")"
                + "&report=1\(query)#token=\(token)"
            browsers.append(try spawnWatched([chromium] + HeadlessChromium.arguments(url: url, userDataDir: profile,
                                                                                  fakeVideo: fakeVideo)))
            pageUsers.append(me)
        }

        /// Waits for `count` reports (the daemon logs each), then reads them.
        func reports(of users: [String]) throws -> [String: PageReport] {
            let arrived = daemon.wait(within: .seconds(55)) { $0.stderr.matches(of: "call report") >= users.count }
            var out: [String: PageReport] = [:]
            for user in users {
                let request = "GET /call/report?room=\(room)&me=\(user) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    + "Authorization: Bearer \(tokens[user]!)\r\n\r\n"
                let reply = try RegistrationTests.exchange(endpoint, request)
                guard let body = reply.range(of: "\r\n\r\n").map({ reply[$0.upperBound...] }),
                      let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
                    continue
                }
                out[user] = PageReport(object: object)
            }
            if !arrived || out.count < users.count {
                let consoles = browsers.map { String($0.stderr.split(separator: "\n")
                    .filter { $0.contains("zonertc ") }.suffix(25).joined(separator: "\n")) }
                Issue.record("reports: \(out.count) of \(users.count)\n\(consoles.joined(separator: "\n----\n"))")
            }
            return out
        }

        /// Stops every browser and the daemon by PID, removes the profiles. Chromium and the daemon end
        /// cleanly on SIGTERM (exit 0): anything else — a crash, a hang that needed SIGKILL — fails the test.
        func stop() {
            for peer in peers { Self.terminate(peer) }
            for (index, browser) in browsers.enumerated() {
                let status = Self.terminate(browser)
                let ended = status.map(String.init) ?? "nothing"
                #expect(status == 0 && browser.crashReport == nil,
                        "Chromium \(index) ended with \(ended): \(browser.stderr.suffix(2000))")
            }
            let status = Self.terminate(daemon)
            let ended = status.map(String.init) ?? "nothing"
            #expect(status == 0 && daemon.crashReport == nil,
                    "the store daemon ended with \(ended): \(daemon.stderr.suffix(2000))")
            for profile in profiles { try? FileManager.default.removeItem(atPath: profile) }
        }

        /// SIGTERM (if still running), then SIGKILL after 10 s; its exit status, nil if it never ended.
        @discardableResult
        static func terminate(_ child: ProcessWatch) -> Int32? {
            if child.exitStatus == nil {
                kill(child.pid, SIGTERM)
                if child.wait(within: .seconds(10)) == nil {
                    kill(child.pid, SIGKILL)
                    _ = child.wait(within: .seconds(5))
                }
            }
            return child.exitStatus
        }
    }

    /// One page's report (a JSON object), passed back from the waiting thread.
    struct PageReport: @unchecked Sendable {
        var object: [String: Any]
        subscript(key: String) -> Any? { object[key] }
    }

    static func number(_ report: PageReport?, _ group: String, _ key: String) -> Int {
        ((report?[group] as? [String: Any])?[key] as? NSNumber)?.intValue ?? -1
    }

    /// Both pages connected, decoded at least 30 frames, and nothing reset the call.
    static func expectConnected(_ reports: [String: PageReport], _ users: [String]) {
        for user in users {
            let report = reports[user]
            #expect(report?["ok"] as? Bool == true, "\(user): \(report?["reason"] ?? "no report")")
            #expect(number(report, "media", "framesDecoded") >= 30, "\(user)")
            #expect(number(report, "call", "resets") == 0, "\(user)")
            #expect(number(report, "inbox", "malformed") == 0, "\(user)")
        }
    }

    @Test("the owner is the offer creator (alice < bob): both pages connect and decode video")
    func ownerOffers() async throws {
        let call = try BrowserCall()
        defer { call.stop() }
        try await call.register("alice", "bob")
        try call.open(me: "alice", remote: "bob", owner: true)
        try call.open(me: "bob", remote: "alice", owner: false)
        let reports = try await offPool { try call.reports(of: ["alice", "bob"]) }
        Self.expectConnected(reports, ["alice", "bob"])
        #expect(reports["alice"]?["offerCreator"] as? Bool == true)
        #expect(reports["bob"]?["scope"] as? String == "shared")
        #expect(Self.number(reports["alice"], "call", "offersSaved") == 1)
        #expect(Self.number(reports["bob"], "call", "answersSaved") == 1)
    }

    @Test("the participant is the offer creator (amy < zed, zed owns the room)")
    func participantOffers() async throws {
        let call = try BrowserCall(room: "room_br0wser2")
        defer { call.stop() }
        try await call.register("amy", "zed")
        try call.open(me: "zed", remote: "amy", owner: true)
        try call.open(me: "amy", remote: "zed", owner: false)
        let reports = try await offPool { try call.reports(of: ["amy", "zed"]) }
        Self.expectConnected(reports, ["amy", "zed"])
        #expect(reports["amy"]?["offerCreator"] as? Bool == true)
        #expect(Self.number(reports["amy"], "call", "offersSaved") == 1)
        #expect(Self.number(reports["zed"], "call", "answersSaved") == 1)
    }

    @Test("a room holding three old epochs: both pages drop them as stale and connect without a reset")
    func oldEpochsAreStale() async throws {
        let call = try BrowserCall(room: "room_br0wser3")
        defer { call.stop() }
        try await call.register("alice", "bob")
        try await Self.seedOldEpochs(call, epochs: 3)
        try call.open(me: "alice", remote: "bob", owner: true)
        try call.open(me: "bob", remote: "alice", owner: false)
        let reports = try await offPool { try call.reports(of: ["alice", "bob"]) }
        Self.expectConnected(reports, ["alice", "bob"])
        // Each page gets the other's offer or answer and chunk of each old epoch: 6 stale records.
        #expect(Self.number(reports["alice"], "inbox", "staleDrops") >= 3)
        #expect(Self.number(reports["bob"], "inbox", "staleDrops") >= 3)
        #expect(Self.number(reports["bob"], "call", "answersSaved") == 1, "bob answered only the new epoch")
        // Once connected, each deletes its own records of the old epochs (an offer or answer and a chunk each).
        #expect(Self.number(reports["alice"], "call", "gcDeleted") >= 2)
    }

    @Test("every push lost (lan:drop=1): the waiting page learns the offer by its poll")
    func pushOutage() async throws {
        let call = try BrowserCall(daemonArguments: ["--push-profile", "lan:drop=1"], room: "room_br0wser4")
        defer { call.stop() }
        try await call.register("amy", "zed")
        // zed (owner, answerer) first, until its push stream is open and the fetch after it done: from then
        // on, with every push lost, only zed's poll (2 s while negotiating) can bring amy's offer.
        try call.open(me: "zed", remote: "amy", owner: true)
        let zed = call.browsers[0]
        let ready = try await offPool {
            zed.wait(within: .seconds(40)) { $0.stderr.contains("stream open, caught up") }
        }
        #expect(ready, "zed's page did not get ready: \(zed.stderr.suffix(2000))")
        try call.open(me: "amy", remote: "zed", owner: false)
        let reports = try await offPool { try call.reports(of: ["amy", "zed"]) }
        Self.expectConnected(reports, ["amy", "zed"])
        for user in ["amy", "zed"] {
            #expect(Self.number(reports[user], "sync", "pushes") == 0, "\(user) got a push through an outage")
        }
        let via = (reports["zed"]?["call"] as? [String: Any])?["appliedVia"] as? [String: Any]
        #expect((via?["poll"] as? NSNumber)?.intValue ?? 0 >= 1, "zed applied: \(via ?? [:])")
        #expect(via?["push"] == nil && via?["start"] == nil && via?["lookup"] == nil, "zed applied: \(via ?? [:])")
    }

    /// The room as an earlier call left it: alice's zone and share, the session record at the last of
    /// `epochs` old epochs (minutes ago), each with alice's offer, bob's answer and a chunk from each.
    static func seedOldEpochs(_ call: BrowserCall, epochs: Int) async throws {
        let alice = RemoteStoreClient(configuration: .init(endpoint: call.endpoint, token: call.tokens["alice"]!),
                                      userRecordName: "alice", deviceID: "seed")
        let zone = ZoneID(zoneName: call.room, ownerName: "alice")
        _ = try await alice.modifyZones(save: [zone], delete: [], scope: .private)
        _ = try await alice.createShare(zone: zone, publicPermission: .readWrite, participants: [:])
        let key = "\(call.room)#alice#bob"
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var records: [Record] = []
        func record(_ type: String, _ name: String, _ fields: RecordFields) {
            var all = fields
            all["sessionKey"] = .string(key)
            all["roomID"] = .string(call.room)
            records.append(Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: all))
        }
        for index in 0..<epochs {
            let epoch = now - Int64(epochs - index) * 60_000
            for (type, owner) in [("offer", "alice"), ("answer", "bob")] {
                record("SignalEnvelope", "SE_\(key)_\(epoch)_\(type)", [
                    "callEpoch": .int64(epoch), "ownerUserId": .string(owner), "envelopeType": .string(type),
                    "payload": .string("v=0\r\n"), "updatedAt": .timestamp(epoch)])
                let batch = #"{"v":1,"candidates":["candidate:1 1 udp 2130706431 127.0.0.1 9 typ host"],"eoc":true}"#
                record("SignalIceChunk", "IC_\(key)_\(epoch)_\(owner)_\(String(repeating: "0", count: 31))\(index)", [
                    "callEpoch": .int64(epoch), "ownerUserId": .string(owner), "candidateType": .string("batch-v1"),
                    "candidate": .string(batch), "chunkCreatedAt": .timestamp(epoch), "seq": .int64(0),
                    "ufrag": .string("old\(index)")])
            }
            if index == epochs - 1 {
                record("SignalSession", "SS_\(key)", ["userId": .string("alice"), "otherUserId": .string("bob"),
                                                      "callEpoch": .int64(epoch), "updatedAt": .timestamp(epoch)])
            }
        }
        let result = try await alice.modifyRecords(ModifyRecordsRequest(saves: records, savePolicy: .allKeys),
                                                   scope: .private)
        #expect(result.results.count == records.count)
    }
}
