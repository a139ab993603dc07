import Browser
import Foundation
import Glibc
import RecordStore
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// Issue 28: the call page joins a room's group call (`/call?…&mesh=1`), the browser's implementation of
/// docs/PROTOCOL.md §11 — one RTCPeerConnection and one video per member, presence records, the join-order
/// offer rule, leaving, the room's limit, hostile records. Pages run in headless Chromium through one
/// `zonertc store serve`; the tests read the pages' reports (`/call/report`, waited for on the daemon's log),
/// read live state and press the hang-up button over the DevTools protocol (`DevToolsPage`), and read the
/// zone through the daemon's HTTP API. No sleeps: every wait is on output or a condition, bounded; every
/// process is stopped by its PID. Without Chromium the suite is skipped, under ZONERTC_CI=1 it fails.
@Suite("Group calls on the call page in headless Chromium", .serialized,
       .enabled(if: ExternalProgram.underCI || (try? HeadlessChromium.locate()) != nil, "Chromium is not installed"))
struct BrowserMeshTests {
    typealias BrowserCall = BrowserCallTests.BrowserCall
    typealias PageReport = BrowserCallTests.PageReport

    @Test("three pages form a full mesh; one hangs up, one navigates away: the rest keep their pairs; zone emptied")
    func fullMesh() async throws {
        let call = try BrowserCall(room: "room_mesh0001")
        defer { call.stop() }
        let users = ["alice", "bob", "carol"]
        let first = try await call.fullMeshOfThree()

        // carol presses the hang-up button: her presence and her pairs' records go; the others end that pair only.
        try call.devTools("carol").evaluate("document.getElementById('hangup').click()")
        #expect(try await call.console("alice", "gc goodbye:", within: .seconds(30)))
        #expect(try await call.console("bob", "gc goodbye:", within: .seconds(30)))
        let afterCarol = try await call.meshReports(users, counts: [2, 2, 2])
        let carolReason = first["carol"]?["reason"] as? String ?? ""
        #expect(afterCarol["carol"]?["status"] as? String == "LEFT: hung up (after OK: \(carolReason))")
        #expect((afterCarol["carol"]?["left"] as? [String: Any])?["reason"] as? String == "hung up")
        for (user, other) in [("alice", "bob"), ("bob", "alice")] {
            let report = afterCarol[user]
            let ended = (Self.member(report, "carol")?["ended"] as? [String: Any])?["reason"] as? String ?? "not ended"
            #expect(ended.hasPrefix("carol left (its CallMember record was deleted)")
                    || ended.hasPrefix("carol hung up"), "\(user): \(ended)")
            Self.expectStillConnected(before: first[user], after: report, with: other, user: user)
            #expect(Self.count(report, "mesh", "legsEnded") == 1, "\(user)")
        }
        var names = try await call.zoneRecordNames(owner: "alice")
        #expect(names.filter { $0.contains("carol") } == ["RM_carol"], "\(names)")

        // bob leaves the page (pagehide): its keepalive request deletes its records; alice ends that pair.
        try call.devTools("bob").evaluate("location.href = 'about:blank'")
        #expect(try await call.console("alice", "gc goodbye:", count: 2, within: .seconds(30)))
        let afterBob = try await call.meshReports(["alice"], counts: [3])
        let ended = (Self.member(afterBob["alice"], "bob")?["ended"] as? [String: Any])?["reason"] as? String ?? ""
        #expect(ended.hasPrefix("bob left (its CallMember record was deleted)") || ended.hasPrefix("bob hung up"),
                "\(ended)")
        names = try await call.zoneRecordNames(owner: "alice")
        #expect(names.filter { $0.contains("bob") } == ["RM_bob"], "\(names)")

        // alice, the last, hangs up: no presence and no signal record is left in the zone.
        try call.devTools("alice").evaluate("document.getElementById('hangup').click()")
        _ = try await call.meshReports(["alice"], counts: [4])
        names = try await call.zoneRecordNames(owner: "alice")
        #expect(names.sorted() == ["RM_alice", "RM_bob", "RM_carol", "room_mesh0001"], "\(names)")
    }

    @Test("a member reloads its page: it rejoins with a new member session; each other page ends exactly that leg")
    func reloadRejoins() async throws {
        let call = try BrowserCall(room: "room_mesh0004")
        defer { call.stop() }
        let first = try await call.fullMeshOfThree()
        let oldSession = try #require(first["carol"]?["memberSession"] as? String)

        // carol reloads: leaving on pagehide, then joining again from the same URL with a new member session. The
        // later joiner now, she offers first to both.
        try call.devTools("carol").evaluate("location.reload()")
        #expect(try await call.console("carol", "done ", count: 2, within: .seconds(90)))
        let rejoined = "r.ok === true && r.memberSession !== '\(oldSession)'"
        #expect(try await call.pageState("carol", rejoined, within: .seconds(30)))
        let carol = try await offPool { try call.liveResult("carol") }
        let newSession = carol["memberSession"] as? String
        #expect((carol["roster"] as? [[String: Any]])?.count == 3, "\(carol["roster"] ?? "no roster")")
        #expect(Self.count(carol, "mesh", "legsStarted") == 2)
        for other in ["alice", "bob"] {
            let leg = Self.member(carol, other)
            #expect(leg?["connectionState"] as? String == "connected", "carol–\(other): \(leg ?? [:])")
            #expect(leg?["firstOffer"] as? Bool == true, "carol, the later joiner now, offers first to \(other)")
        }

        for (user, other) in [("alice", "bob"), ("bob", "alice")] {
            // The new leg with carol decodes (its end of the pair on carol's epoch), the old one ended once.
            let decoding = "r.members.carol && r.members.carol.memberSession === '\(newSession ?? "")' "
                + "&& r.members.carol.connectionState === 'connected' && r.members.carol.media.framesDecoded >= 30"
            #expect(try await call.pageState(user, decoding, within: .seconds(30)), "\(user)")
            let live = try await offPool { try call.liveResult(user) }
            let leg = Self.member(live, "carol")
            #expect(leg?["ended"] is NSNull, "\(user)")
            #expect(leg?["firstOffer"] as? Bool == false, "\(user): carol, the later joiner, offers first")
            let (mine, hers) = (Self.epoch(live, "carol"), Self.epoch(carol, user))
            #expect(mine != nil && mine == hers, "\(user)–carol: epochs \(mine ?? -1), \(hers ?? -1)")
            #expect((mine ?? 0) > (Self.epoch(first[user], "carol") ?? .max), "\(user): the rejoin starts a new epoch")
            let ended = live["legsEnded"] as? [[String: Any]] ?? []
            #expect(ended.count == 1, "\(user): \(ended.map { $0["remote"] ?? "?" })")
            #expect(ended.first?["remote"] as? String == "carol", "\(user)")
            #expect(ended.first?["memberSession"] as? String == oldSession, "\(user): the old leg is the one ended")
            let reason = (ended.first?["ended"] as? [String: Any])?["reason"] as? String ?? "not ended"
            let reasons = ["carol left (its CallMember record was deleted)", "carol hung up",
                           "carol rejoined with a new member session"]
            #expect(reasons.contains { reason.hasPrefix($0) }, "\(user): \(reason)")
            #expect(Self.count(live, "mesh", "legsStarted") == 3, "\(user)")
            #expect(Self.count(live, "mesh", "legsEnded") == 1, "\(user)")
            Self.expectStillConnected(before: first[user], after: live, with: other, user: user)
        }
        // Of carol's first member session no description is left: leaving deleted them.
        let names = try await call.zoneRecordNames(owner: "alice")
        #expect(names.filter { $0.hasPrefix("CM_") }.sorted() == ["CM_alice", "CM_bob", "CM_carol"], "\(names)")
        for user in ["alice", "bob"] {
            let old = Self.epoch(first[user], "carol") ?? -1
            #expect(!names.contains { $0.hasPrefix("SE_") && $0.contains("_\(old)_") }, "\(user): \(names)")
        }
    }

    @Test("hostile records: forged and malformed presence, a forged offer in a pair, a garbage offer from a non-member")
    func hostileRecords() async throws {
        let call = try BrowserCall(room: "room_mesh0002")
        defer { call.stop() }
        try await call.register("alice", "bob", "mallory")
        for user in ["alice", "bob"] {
            try call.openMesh(me: user, roomOwner: "alice", query: "&frames=30&peers=1&timeout=90")
        }
        let first = try await call.meshReports(["alice", "bob"], counts: [1, 1])
        Self.expectFullMesh(first, ["alice", "bob"])
        let zone = ZoneID(zoneName: call.room, ownerName: "alice")
        let mallory = try await call.participant("mallory", zone: zone)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let pairKey = "\(call.room)#alice#bob", malloryKey = "\(call.room)#alice#mallory"
        func record(_ type: String, _ name: String, _ fields: RecordFields) -> Record {
            Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: fields)
        }
        func member(_ user: String, session: String, expires: Int64) -> RecordFields {
            ["roomID": .string(call.room), "userId": .string(user), "memberSession": .string(session),
             "joinedAt": .timestamp(now), "expiresAt": .timestamp(expires)]
        }
        let hostile = [
            // Presence that would pin mallory in the room forever, with a member session that is no such thing.
            record("CallMember", "CM_mallory",
                   member("mallory", session: "not-a-session", expires: 253_402_300_799_000)),
            // bob's presence, written over by mallory.
            record("CallMember", "CM_bob",
                   member("bob", session: String(repeating: "f", count: 32), expires: now + 45_000)),
            // An offer and a session record in the pair alice–bob, in bob's name, a later epoch: a reset if believed.
            record("SignalSession", "SS_\(pairKey)", [
                "sessionKey": .string(pairKey), "roomID": .string(call.room), "userId": .string("bob"),
                "otherUserId": .string("alice"), "callEpoch": .int64(now + 1000), "updatedAt": .timestamp(now)]),
            record("SignalEnvelope", "SE_\(pairKey)_\(now + 1000)_offer", [
                "sessionKey": .string(pairKey), "roomID": .string(call.room), "callEpoch": .int64(now + 1000),
                "ownerUserId": .string("bob"), "envelopeType": .string("offer"), "payload": .string("v=0\r\n"),
                "updatedAt": .timestamp(now)]),
            // mallory calls alice without presence, with an offer no browser can apply.
            record("SignalSession", "SS_\(malloryKey)", [
                "sessionKey": .string(malloryKey), "roomID": .string(call.room), "userId": .string("mallory"),
                "otherUserId": .string("alice"), "callEpoch": .int64(now), "updatedAt": .timestamp(now)]),
            record("SignalEnvelope", "SE_\(malloryKey)_\(now)_offer", [
                "sessionKey": .string(malloryKey), "roomID": .string(call.room), "callEpoch": .int64(now),
                "ownerUserId": .string("mallory"), "envelopeType": .string("offer"),
                "payload": .string("this is not SDP"), "updatedAt": .timestamp(now)]),
            // A signal record of no pair.
            record("SignalEnvelope", "SE_nokey", ["ownerUserId": .string("mallory")]),
        ]
        let saved = try await mallory.modifyRecords(ModifyRecordsRequest(saves: hostile, savePolicy: .allKeys),
                                                    scope: .shared)
        #expect(saved.results.count == hostile.count)
        #expect(try await call.console("alice", "end [mallory] failed before connecting", within: .seconds(30)))
        for user in ["alice", "bob"] {
            #expect(try await call.console(user, "drop forged: SE_\(pairKey)_\(now + 1000)_offer",
                                           within: .seconds(30)))
            #expect(try await call.console(user, "drop presence refused: CM_mallory", within: .seconds(30)))
            #expect(try await call.console(user, "drop presence refused: CM_bob: last written by mallory",
                                           within: .seconds(30)))
        }
        // alice reports the failed leg; then each page's live state, once it has counted the drops and decoded
        // more from the other (a report or a read may come before the page's next tick): their pair goes on.
        _ = try await call.meshReports(["alice"], counts: [2])
        var live: [String: PageReport] = [:]
        for (user, other) in [("alice", "bob"), ("bob", "alice")] {
            let before = ((Self.member(first[user], other)?["media"] as? [String: Any])?["framesDecoded"]
                          as? NSNumber)?.intValue ?? 0
            let counted = "r.mesh.forgedRecords >= 2 && r.mesh.memberRecordsRefused >= 2 "
                + "&& r.mesh.unkeyedRecords === 1 && r.mesh.failedLegs === \(user == "alice" ? 1 : 0) "
                + "&& r.members.\(other) && r.members.\(other).media.framesDecoded > \(before)"
            #expect(try await call.pageState(user, counted, within: .seconds(30)), "\(user)")
            live[user] = try await offPool { try call.liveResult(user) }
        }
        let (alice, bob) = (live["alice"], live["bob"])
        for (user, report, other) in [("alice", alice, "bob"), ("bob", bob, "alice")] {
            Self.expectStillConnected(before: first[user], after: report, with: other, user: user)
            #expect(Self.count(report, "mesh", "forgedRecords") >= 2, "\(user): the session and the offer")
            #expect(Self.count(report, "mesh", "memberRecordsRefused") >= 2, "\(user)")
            #expect(Self.count(report, "mesh", "unkeyedRecords") == 1, "\(user)")
            #expect(Self.count(Self.member(report, other).map { PageReport(object: $0) }, "call", "resets") == 0)
        }
        let malloryLeg = Self.member(alice, "mallory")
        #expect((malloryLeg?["ended"] as? [String: Any])?["reason"] as? String
                == "failed before connecting (offer of epoch \(now))", "\(malloryLeg ?? [:])")
        #expect(Self.count(alice, "mesh", "callersAnswered") == 1)
        #expect(Self.count(alice, "mesh", "failedLegs") == 1)
        #expect(Self.count(bob, "mesh", "legsStarted") == 1, "bob never started a leg with mallory")
    }

    @Test("a 6th member leaves saying the room is full; members that never answer: fallback, then unanswered")
    func limitAndSilentMembers() async throws {
        let call = try BrowserCall(room: "room_mesh0003")
        defer { call.stop() }
        try await call.register("alice", "bob", "carol", "dave", "erin", "frank")
        // The silent members' legs wait 15 s for an answer (3 s for the offer they owe), not the default 40 (8).
        for user in ["alice", "bob"] {
            try call.openMesh(me: user, roomOwner: "alice", query: "&frames=30&peers=1&timeout=150&answerTimeout=15")
        }
        let first = try await call.meshReports(["alice", "bob"], counts: [1, 1])
        Self.expectFullMesh(first, ["alice", "bob"])
        // Three more members present, their presence written through the API by themselves; they never offer
        // nor answer. frank, joining after them, is 6th.
        let zone = ZoneID(zoneName: call.room, ownerName: "alice")
        var silent: [String: (RemoteStoreClient, Int64)] = [:]
        func present(_ user: String) async throws {
            let (client, joined) = silent[user]!
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            // expiresAt at most 55 s after the store's stamp (TTL + skew, §11.1): present past the 30 s bound.
            let presence = Record(recordType: "CallMember", id: RecordID(recordName: "CM_\(user)", zoneID: zone),
                                  fields: ["roomID": .string(call.room), "userId": .string(user),
                                           "memberSession": .string(String(repeating: "ab", count: 16)),
                                           "joinedAt": .timestamp(joined), "expiresAt": .timestamp(now + 55_000)])
            _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [presence], savePolicy: .allKeys),
                                               scope: .shared)
        }
        for user in ["carol", "dave", "erin"] {
            silent[user] = (try await call.participant(user, zone: zone), Int64(Date().timeIntervalSince1970 * 1000))
            try await present(user)
        }
        try call.openMesh(me: "frank", roomOwner: "alice", query: "&frames=30&peers=1&timeout=60")
        let frank = try await call.meshReports(["frank"], counts: [1])["frank"]
        let reason = frank?["reason"] as? String ?? "no report"
        #expect(frank?["ok"] as? Bool == false)
        #expect(reason == "the room is full: we are ranked 6th of 6 members present and a call has at most 5",
                "\(reason)")
        #expect((frank?["status"] as? String)?.hasPrefix("LEFT: the room is full") == true, "\(frank?["status"] ?? "")")
        let full = (frank?["left"] as? [String: Any])?["full"] as? [String: Any]
        #expect((full?["rank"] as? NSNumber)?.intValue == 6, "\(full ?? [:])")
        #expect(Self.count(frank, "mesh", "legsStarted") == 0)
        // What a person sees on frank's page: the status says so, marked bad, and no member's video.
        #expect(try await call.pageState("frank", "document.getElementById('status').textContent"
                                         + ".startsWith('LEFT: the room is full: we are ranked 6th of 6') "
                                         + "&& document.getElementById('status').className === 'bad' "
                                         + "&& document.querySelectorAll('#grid video').length === 0",
                                         within: .seconds(10)))
        let names = try await call.zoneRecordNames(owner: "alice")
        #expect(!names.contains("CM_frank") && names.contains("CM_alice") && names.contains("CM_erin"), "\(names)")
        #expect(!names.contains { $0.hasPrefix("S") && $0.contains("frank") }, "\(names)")

        // The silent members joined after alice and bob, so they owed the first offers: after 3 s alice and bob
        // offer themselves, and 15 s later those legs end unanswered, each a line of its own.
        for user in ["alice", "bob"] {
            for other in ["carol", "dave", "erin"] {
                #expect(try await call.console(user, "epoch [\(other)] no offer from \(other) within 3 s: offering",
                                               within: .seconds(30)))
            }
        }
        for user in ["carol", "dave", "erin"] { try await present(user) }
        for user in ["alice", "bob"] {
            for other in ["carol", "dave", "erin"] {
                #expect(try await call.console(user, "end [\(other)] \(other) did not answer within 15 s",
                                               within: .seconds(55)))
            }
        }
        for (user, other) in [("alice", "bob"), ("bob", "alice")] {
            let live = try await offPool { try call.liveResult(user) }
            Self.expectStillConnected(before: first[user], after: live, with: other, user: user)
            #expect(Self.member(live, "frank") == nil, "\(user) started a leg with frank")
            #expect(Self.count(live, "mesh", "fallbackOffers") == 3, "\(user)")
            #expect(Self.count(live, "mesh", "unanswered") == 3, "\(user)")
            #expect(Self.count(live, "mesh", "legsStarted") == 4, "\(user): no second leg with a silent member")
            let carol = (Self.member(live, "carol")?["ended"] as? [String: Any])?["reason"] as? String
            #expect(carol == "carol did not answer within 15 s", "\(user): \(carol ?? "not ended")")
        }
    }

    // MARK: Expectations

    static func member(_ report: PageReport?, _ remote: String) -> [String: Any]? {
        (report?["members"] as? [String: Any])?[remote] as? [String: Any]
    }

    static func count(_ report: PageReport?, _ group: String, _ key: String) -> Int {
        BrowserCallTests.number(report, group, key)
    }

    static func epoch(_ report: PageReport?, _ remote: String) -> Int64? {
        (member(report, remote)?["epoch"] as? NSNumber)?.int64Value
    }

    /// Every page done, connected to every other, decoding; both ends of each pair on one epoch, exactly one
    /// of them the first offerer; each page's roster holds everyone with the member session they report.
    static func expectFullMesh(_ reports: [String: PageReport], _ users: [String]) {
        for user in users {
            let report = reports[user]
            #expect(report?["ok"] as? Bool == true, "\(user): \(report?["reason"] ?? "no report")")
            let roster = report?["roster"] as? [[String: Any]] ?? []
            #expect(roster.count == users.count, "\(user): \(roster)")
            for other in users where other != user {
                let leg = member(report, other)
                #expect(leg?["connectionState"] as? String == "connected", "\(user)–\(other): \(leg ?? [:])")
                #expect(((leg?["media"] as? [String: Any])?["framesDecoded"] as? NSNumber)?.intValue ?? 0 >= 30,
                        "\(user) from \(other)")
                #expect(leg?["ended"] is NSNull, "\(user)–\(other)")
                let (mine, theirs) = (epoch(report, other), epoch(reports[other], user))
                #expect(mine != nil && mine == theirs, "\(user)–\(other): epochs \(mine ?? -1), \(theirs ?? -1)")
                #expect(leg?["firstOffer"] as? Bool != member(reports[other], user)?["firstOffer"] as? Bool)
                let session = roster.first { $0["userId"] as? String == other }?["memberSession"] as? String
                #expect(session != nil && session == reports[other]?["memberSession"] as? String, "\(user): \(other)")
            }
        }
    }

    /// The pair with `other` is still connected on the same epoch, has decoded more since, and has not ended.
    static func expectStillConnected(before: PageReport?, after: PageReport?, with other: String, user: String) {
        let leg = member(after, other)
        #expect(leg?["connectionState"] as? String == "connected", "\(user)–\(other): \(leg ?? [:])")
        #expect(leg?["ended"] is NSNull, "\(user)–\(other)")
        #expect(epoch(after, other) == epoch(before, other), "\(user)–\(other) moved to another epoch")
        let frames = { (report: PageReport?) in
            ((member(report, other)?["media"] as? [String: Any])?["framesDecoded"] as? NSNumber)?.intValue ?? 0
        }
        #expect(frames(after) > frames(before), "\(user) decoded nothing more from \(other)")
    }
}

extension BrowserCallTests.BrowserCall {
    /// alice (the room's owner), bob and carol open their group-call pages; their first reports (each page
    /// done: 30 frames decoded from both others), expected to show a full mesh.
    func fullMeshOfThree() async throws -> [String: BrowserCallTests.PageReport] {
        let users = ["alice", "bob", "carol"]
        try await register("alice", "bob", "carol")
        for user in users { try openMesh(me: user, roomOwner: "alice") }
        let first = try await meshReports(users, counts: [1, 1, 1])
        BrowserMeshTests.expectFullMesh(first, users)
        return first
    }

    /// Opens `me`'s group-call page (`mesh=1`) in a headless Chromium of its own, its DevTools port open.
    func openMesh(me: String, roomOwner: String, query: String = "&frames=30&peers=2&timeout=90") throws {
        let chromium = try HeadlessChromium.locate()
        let profile = NSTemporaryDirectory() + "zonertc-chromium-\(UUID().uuidString)"
        profiles.append(profile)
        let token = tokens[me]!.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let owner = me == roomOwner ? "&owner=1" : "&roomOwner=\(roomOwner)"
        let url = "http://\(endpoint)/call?room=\(room)&me=\(me)&mesh=1\(owner)&report=1\(query)#token=\(token)"
        var arguments = HeadlessChromium.arguments(url: url, userDataDir: profile)
        arguments.insert("--remote-debugging-port=0", at: arguments.count - 1)
        browsers.append(try spawnWatched([chromium] + arguments))
        pageUsers.append(me)
    }

    /// The browser of `user`'s page.
    func browser(_ user: String) -> ProcessWatch {
        browsers[pageUsers.firstIndex(of: user)!]
    }

    /// Waits until `users[i]` has posted `counts[i]` reports (the daemon logs each), then reads the latest.
    func meshReports(_ users: [String], counts: [Int], within limit: Duration = .seconds(120)) async throws
        -> [String: BrowserCallTests.PageReport] {
        try await offPool {
            let arrived = self.daemon.wait(within: limit) { daemon in
                zip(users, counts).allSatisfy { user, count in
                    daemon.stderr.split(separator: "\n").filter {
                        $0.contains("call report") && $0.hasSuffix(" user=\(user)")
                    }.count >= count
                }
            }
            var out: [String: BrowserCallTests.PageReport] = [:]
            for user in users {
                let request = "GET /call/report?room=\(self.room)&me=\(user) HTTP/1.1\r\nHost: x\r\n"
                    + "Connection: close\r\nAuthorization: Bearer \(self.tokens[user]!)\r\n\r\n"
                let reply = try RegistrationTests.exchange(self.endpoint, request)
                if let body = reply.range(of: "\r\n\r\n").map({ reply[$0.upperBound...] }),
                   let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] {
                    out[user] = BrowserCallTests.PageReport(object: object)
                }
            }
            if !arrived {
                Issue.record("reports of \(users) (\(counts)) did not all come:\n\(self.consoles(users))")
            }
            return out
        }
    }

    /// The last lines the pages of `users` logged (for failure messages).
    func consoles(_ users: [String]) -> String {
        users.map { user in
            "\(user):\n" + browser(user).stderr.split(separator: "\n").filter { $0.contains("zonertc ") }
                .suffix(30).joined(separator: "\n")
        }.joined(separator: "\n----\n")
    }

    /// Whether `user`'s page logged `text` (`count` times) within `limit`.
    func console(_ user: String, _ text: String, count: Int = 1, within limit: Duration) async throws -> Bool {
        let page = browser(user)
        let seen = try await offPool {
            page.wait(within: limit) { $0.stderr.components(separatedBy: "zonertc \(text)").count - 1 >= count }
        }
        if !seen { Issue.record("\(user) did not log \(text):\n\(consoles([user]))") }
        return seen
    }

    /// Whether `condition`, JavaScript over `r` (the page's `window.zonertcResult`), held on `user`'s page within
    /// `limit`: the page checks it at each of its ticks and answers when it holds or the deadline passed.
    func pageState(_ user: String, _ condition: String, within limit: Duration) async throws -> Bool {
        let ms = limit.components.seconds * 1000
        let expression = """
            new Promise((resolve) => {
                const deadline = Date.now() + \(ms);
                const check = () => {
                    let held = false;
                    try { held = Boolean(((r) => (\(condition)))(window.zonertcResult)); } catch (error) {}
                    if (held || Date.now() >= deadline) resolve(held); else setTimeout(check, 250);
                };
                check();
            })
            """
        let page = try devTools(user)
        let answer = try await offPool {
            try page.evaluate(expression, awaitPromise: true, within: limit + .seconds(10))
        }
        let held = answer.contains(#""value":true"#)
        if !held {
            let lines = consoles([user])
            Issue.record("\(user): \(condition) did not hold within \(limit): \(answer.prefix(300))\n\(lines)")
        }
        return held
    }

    /// `user`'s page over the DevTools protocol.
    func devTools(_ user: String) throws -> DevToolsPage {
        try DevToolsPage(browserStderr: browser(user).stderr, urlPart: "me=\(user)")
    }

    /// `user`'s window.zonertcResult now, read from the page itself.
    func liveResult(_ user: String) throws -> BrowserCallTests.PageReport {
        let answer = try devTools(user).evaluate("JSON.stringify(window.zonertcResult)")
        guard let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
              let text = ((object["result"] as? [String: Any])?["result"] as? [String: Any])?["value"] as? String,
              let result = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw SpawnFailure("\(user)'s page gave no result: \(answer.prefix(500))")
        }
        return BrowserCallTests.PageReport(object: result)
    }

    /// A client of `user`, who has accepted the share of `zone`.
    func participant(_ user: String, zone: ZoneID) async throws -> RemoteStoreClient {
        let client = RemoteStoreClient(configuration: .init(endpoint: endpoint, token: tokens[user]!),
                                       userRecordName: user, deviceID: "test-\(user)")
        _ = try await client.acceptShare(zone: zone)
        return client
    }

    /// The names of the live records in the room's zone, read by its owner.
    func zoneRecordNames(owner: String) async throws -> [String] {
        let client = RemoteStoreClient(configuration: .init(endpoint: endpoint, token: tokens[owner]!),
                                       userRecordName: owner, deviceID: "test-\(owner)")
        let zone = ZoneID(zoneName: room, ownerName: owner)
        var names: [String] = [], token: ChangeToken?
        for _ in 0..<100 {
            let changes = try await client.fetchZoneChanges(zone, since: token, resultsLimit: nil, scope: .private)
            names += changes.changed.map(\.id.recordName)
            names.removeAll { name in changes.deleted.contains { $0.id.recordName == name } }
            token = changes.syncToken
            if !changes.moreComing { break }
        }
        return names
    }
}
