import Foundation
import RecordStore
import SDP
import Signaling
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// Group calls in real processes (issue 28): `zonertc call --peers 3`, and `zonertc peer` without
/// `--remote` in rooms others made hostile — a member record with hostile fields, a member that never
/// answers, a room already full. Every wait is on a process's exit, bounded; every process is stopped
/// by its PID.
@Suite("zonertc group calls in real processes", .serialized)
struct MeshProcessTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    struct CallReport: Decodable {
        struct Stream: Decodable { var from: String; var to: String; var identical: Bool; var framesReceived: Int }
        struct Verdict: Decodable { var ok: Bool; var text: String }
        var streams: [Stream]
        var timeToAllPairsMs: Double?
        var verdict: Verdict
    }

    struct Summary: Decodable {
        struct Leg: Decodable { var remote: String; var outcome: String; var ended: String? }
        struct Counters: Decodable {
            var memberRecordsRefused: Int; var unanswered: Int; var legsStarted: Int; var forgedRecords: Int
            var callersAnswered: Int
        }
        var outcome: String
        var reason: String?
        var leftReason: String?
        var roomCounters: Counters?
        var legs: [Leg]
    }

    @Test("call --peers 3: all six directed streams frame-identical, and the time to all pairs")
    func threePeers() throws {
        let file = Self.fixtures.appendingPathComponent("testsrc-32x24-5.y4m").path
        let run = try ZonertcProcess.run(["call", file, "--peers", "3", "--pace", "max", "--json", "--timeout", "30s"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let report = try JSONDecoder().decode(CallReport.self, from: Data(run.stdout.utf8))
        #expect(report.verdict.ok, "\(report.verdict.text)")
        #expect(report.streams.count == 6)
        #expect(report.streams.allSatisfy { $0.identical && $0.framesReceived == 5 })
        #expect(Set(report.streams.map { "\($0.from)>\($0.to)" }).count == 6)
        #expect(report.timeToAllPairsMs != nil)
    }

    @Test("call --peers 2 --mesh: a group call of two, timed as the larger ones are; --mesh --browser refused")
    func meshOfTwo() throws {
        struct Report: Decodable {
            struct Step: Decodable { var member: String; var joined: Double?; var lastFirstFrame: Double? }
            var streams: [CallReport.Stream]
            var timeToAllPairsMs: Double?
            var breakdown: [Step]
            struct CPU: Decodable { var membersMs: Double; var storeMs: Double?; var perMemberMs: [Double] }
            var cpuToAllPairs: CPU?
            var verdict: CallReport.Verdict
        }
        let file = Self.fixtures.appendingPathComponent("testsrc-32x24-5.y4m").path
        let run = try ZonertcProcess.run(["call", file, "--peers", "2", "--mesh", "--pace", "max", "--json",
                                          "--timeout", "30s"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.stdout.utf8))
        #expect(report.verdict.ok, "\(report.verdict.text)")
        #expect(report.streams.count == 2 && report.streams.allSatisfy { $0.identical && $0.framesReceived == 5 })
        #expect(report.timeToAllPairsMs != nil)
        // Each member's timeline: joined, then a first frame from the other.
        #expect(report.breakdown.map(\.member) == ["alice", "bob"])
        for step in report.breakdown {
            let joined = try #require(step.joined), first = try #require(step.lastFirstFrame)
            #expect(first >= joined, "\(step.member): joined \(joined) ms, first frame \(first) ms")
        }
        // The CPU spent in that window: each member's own (from its join to its last first frame) and the daemon's.
        let cpu = try #require(report.cpuToAllPairs)
        #expect(cpu.perMemberMs.count == 2 && cpu.perMemberMs.allSatisfy { $0 > 0 } && cpu.membersMs > 0)
        #expect(cpu.storeMs != nil)
        let browser = try ZonertcProcess.run(["call", file, "--peers", "2", "--mesh", "--browser"])
        #expect(browser.status == 2 && browser.stderr.contains("--mesh does not go with --browser"),
                "\(browser.stderr)")
    }

    @Test("call --peers 3 --relay-only: every leg through our TURN relay on an allocation of its own, all identical")
    func threePeersRelayed() throws {
        let file = Self.fixtures.appendingPathComponent("testsrc-32x24-5.y4m").path
        let run = try ZonertcProcess.run(["call", file, "--peers", "3", "--relay-only", "--pace", "max", "--json",
                                          "--timeout", "30s"])
        try RelayedGroupCallReport.expect(run, peers: 3, frames: 5)
    }

    @Test("bench signaling --peers 3: group calls of three converge, timed and counted; --peers 6 is refused")
    func benchSignalingMesh() throws {
        struct Report: Decodable {
            struct Row: Decodable {
                var peers: Int?; var calls: Int; var failures: Int; var p50Ms: Double?; var storeRequestsPerCall: Double?
            }
            var rows: [Row]
        }
        let run = try ZonertcProcess.run(["bench", "signaling", "--peers", "3", "--profiles", "lan", "--strategies",
                                          "push", "--calls", "1", "--timeout", "20s", "--json"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let row = try #require(try JSONDecoder().decode(Report.self, from: Data(run.stdout.utf8)).rows.first)
        #expect(row.peers == 3 && row.calls == 1 && row.failures == 0)
        #expect((row.p50Ms ?? 0) > 0)
        // Every member saves its presence and fetches at least once, and each pair negotiates.
        #expect((row.storeRequestsPerCall ?? 0) >= 9, "\(row.storeRequestsPerCall ?? 0)")
        let six = try ZonertcProcess.run(["bench", "signaling", "--peers", "6"])
        #expect(six.status == 2 && six.stderr.contains("--peers"), "\(six.stderr)")
    }

    // MARK: - Rooms made hostile

    private func token(_ user: String, _ daemon: DaemonProcess) async throws -> String {
        try await RemoteStoreClient.register(userName: user, at: daemon.endpoint)
    }

    private func client(_ user: String, token: String, _ daemon: DaemonProcess) -> RemoteStoreClient {
        RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token), userRecordName: user,
                          deviceID: "\(user)-device")
    }

    /// Sets up `room` for `user` (alice owns it).
    private func setUp(_ user: String, room: RoomID, _ daemon: DaemonProcess) async throws
        -> (RemoteStoreClient, RoomBinding) {
        let client = client(user, token: try await token(user, daemon), daemon)
        let role: RoomRole = user == "alice" ? .owner : .participant(ownerUserID: "alice")
        return (client, try await client.setUp(RoomSetup(roomID: room, role: role, myUserID: user, displayName: user))
            .get())
    }

    /// Sets up `room` for `user` and saves what `member` makes of the user's presence.
    private func present(_ user: String, room: RoomID, _ daemon: DaemonProcess,
                         _ member: (CallMember) -> CallMember = { $0 }) async throws {
        let (client, binding) = try await setUp(user, room: room, daemon)
        let now = WallClock().now().millisecondsSinceEpoch
        let honest = CallMember(roomID: room.rawValue, userID: user, memberSession: String(repeating: "ab", count: 16),
                                joinedAtMs: now - 1000, expiresAtMs: now + 40_000)
        let record = member(honest).record(over: nil, in: binding.zone)
        let saved = await client.perform(StoreRequest(scope: binding.scope, .modifyRecords(
            ModifyRecordsRequest(saves: [record], savePolicy: .allKeys, atomic: false))))
        guard case .modified(let result) = saved, result.results.allSatisfy({ $0.record != nil }) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "not saved: \(saved)"])
        }
    }

    private func member(_ me: String, room: RoomID, token: String? = nil, connectTimeout: String = "20s",
                        _ daemon: DaemonProcess, _ extra: [String]) async throws -> ChildProcess {
        let file = Self.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let role = me == "alice" ? ["--owner"] : ["--room-owner", "alice"]
        var bearer = token ?? ""
        if token == nil { bearer = try await self.token(me, daemon) }
        return try .zonertc(["peer", "--store", "http://\(daemon.endpoint)", "--room", room.rawValue, "--me", me,
                             "--token", bearer, "--send", file, "--connect-timeout", connectTimeout,
                             "--media-timeout", "20s", "--json"] + role + extra)
    }

    private func summary(_ process: ChildProcess) throws -> Summary {
        let last = process.stdout.split(separator: "\n").last ?? ""
        return try JSONDecoder().decode(Summary.self, from: Data(last.utf8))
    }

    /// An offer envelope of `owner`'s to `to` in `zone`, for epoch `epoch` (ICE credentials and a DTLS fingerprint,
    /// no candidate: it claims presence and nothing more).
    private func offer(from owner: String, to: String, room: RoomID, zone: ZoneID, epoch: Int64) throws -> Record {
        let key = try SessionKey(roomID: room, users: owner, to)
        let dtls = SilentVideoConfiguration.DTLS(fingerprint: DTLSFingerprint(hashFunction: "sha-256",
                                                                              digest: Array(repeating: 0xAB, count: 32)))
        let description = SessionDescription.silentVideoOffer(SilentVideoConfiguration(
            sessionID: 7, iceCredentials: ICECredentials(usernameFragment: "zzzz", password: String(repeating: "p", count: 22)),
            dtls: dtls))
        return SignalEnvelope(sessionKey: key.rawValue, roomID: room.rawValue, callEpoch: CallEpoch(milliseconds: epoch),
                              ownerUserID: owner, envelopeType: .offer, description: description, updatedAtMs: epoch)
            .record(name: SignalRecordNames(sessionKey: key).envelope(epoch: CallEpoch(milliseconds: epoch), type: .offer),
                    in: zone)
    }

    /// Issue 28's bad input, each with a clear outcome in alice's and bob's summaries while their own leg completes:
    /// a presence record with hostile fields (refused, counted, logged), a member that never answers (its leg ends
    /// unanswered), a user not in the share (the store refuses its offer and its `zonertc peer` fails at once), an
    /// offer written by a participant in another member's name (dropped as forged, counted, logged), and an offer
    /// from a participant who is not in the group call (answered: the offer proves presence; counted, logged).
    @Test("bad input in real processes: hostile presence, a silent member, a user not in the share, forged and non-member offers")
    func hostileAndSilentMembers() async throws {
        let daemon = try DaemonProcess(arguments: ["--memory"])
        let room = try RoomID("room_meshbad1")
        // Alice's room exists before anyone else joins it, shared with the users named here only.
        let aliceToken = try await token("alice", daemon)
        let aliceClient = client("alice", token: aliceToken, daemon)
        let zone = try await aliceClient.setUp(
            RoomSetup(roomID: room, role: .owner, myUserID: "alice", displayName: "alice")).get().zone
        _ = try await aliceClient.updateShare(zone: zone, ShareUpdate(
            publicPermission: SharePermission.none,
            addParticipants: ["bob": .readWrite, "mallory": .readWrite, "ghost": .readWrite, "trudy": .readWrite]))
        // Eve is a user of the store but not in alice's share: she cannot write there, nor join.
        let eveToken = try await token("eve", daemon)
        let outsider = await client("eve", token: eveToken, daemon).perform(StoreRequest(scope: .shared, .modifyRecords(
            ModifyRecordsRequest(saves: [try offer(from: "eve", to: "alice", room: room, zone: zone,
                                                   epoch: WallClock().now().millisecondsSinceEpoch)],
                                 savePolicy: .allKeys, atomic: false))))
        let eveWrote: Bool = if case .modified(let result) = outsider { !result.savedRecords.isEmpty } else { false }
        #expect(!eveWrote, "a user not in the share saved a record: \(outsider)")
        // A participant may start before the owner made the room, so the refusal is retried until --connect-timeout.
        let eve = try await member("eve", room: room, token: eveToken, connectTimeout: "2s", daemon, ["--peers", "2"])
        defer { eve.kill() }
        let alice = try await member("alice", room: room, token: aliceToken, daemon, ["--record", NSTemporaryDirectory()
                                                                    + "zonertc-meshbad-\(getpid())",
                                                                   "--peers", "2", "--answer-timeout", "1s"])
        defer { alice.kill() }
        // Mallory's presence would last 292 million years (beyond the TTL: refused); Ghost's is honest, but
        // its user never signals.
        try await present("mallory", room: room, daemon) {
            var m = $0
            m.expiresAtMs = .max
            return m
        }
        try await present("ghost", room: room, daemon)
        // Trudy accepted the share but never joins the call: she writes an offer in ghost's name to alice (forged:
        // its writer is not its owner) and one of her own (answered: the offer proves presence).
        let (trudy, trudyBinding) = try await setUp("trudy", room: room, daemon)
        let now = WallClock().now().millisecondsSinceEpoch
        let trudyWrote = await trudy.perform(StoreRequest(scope: trudyBinding.scope, .modifyRecords(ModifyRecordsRequest(
            saves: [try offer(from: "ghost", to: "alice", room: room, zone: zone, epoch: now),
                    try offer(from: "trudy", to: "alice", room: room, zone: zone, epoch: now + 1)],
            savePolicy: .allKeys, atomic: false))))
        guard case .modified(let written) = trudyWrote, written.savedRecords.count == 2 else {
            Issue.record("trudy's offers not saved: \(trudyWrote)")
            return
        }
        let bob = try await member("bob", room: room, daemon, ["--record", NSTemporaryDirectory()
                                                               + "zonertc-meshbad-bob-\(getpid())",
                                                               "--peers", "2", "--answer-timeout", "1s",
                                                               "--pace", "realtime"])
        defer { bob.kill() }
        let (a, b, e) = try await offPool { (alice.wait(seconds: 60), bob.wait(seconds: 60), eve.wait(seconds: 30)) }
        #expect(a == 0, "alice: \(alice.stderr)\n\(alice.stdout)")
        #expect(b == 0, "bob: \(bob.stderr)\n\(bob.stdout)")
        #expect(e == 1, "eve: \(eve.stderr)\n\(eve.stdout)")
        #expect(eve.stderr.contains("cannot set up room room_meshbad1") && eve.stderr.contains("not a participant"),
                "eve: \(eve.stderr)")
        for process in [alice, bob] {
            let s = try summary(process)
            #expect(s.outcome == "completed", "\(process.stdout)")
            #expect((s.roomCounters?.memberRecordsRefused ?? 0) >= 1, "\(process.stdout)")
            #expect(!s.legs.contains { ["mallory", "eve"].contains($0.remote) }, "\(process.stdout)")
            #expect(s.legs.contains { $0.remote == (process === alice ? "bob" : "alice") && $0.outcome == "completed" },
                    "\(process.stdout)")
            let ghost = s.legs.first { $0.remote == "ghost" }
            #expect(ghost?.outcome == "failed", "\(process.stdout)")
            #expect(ghost?.ended?.contains("ghost did not answer within") == true, "\(process.stdout)")
        }
        #expect(alice.stderr.contains("CM_mallory"), "alice logged: \(alice.stderr)")
        // The offer in ghost's name: dropped unread, counted and logged; trudy's own: a leg, counted and logged.
        let s = try summary(alice)
        #expect((s.roomCounters?.forgedRecords ?? 0) >= 1, "\(alice.stdout)")
        #expect(alice.stderr.split(separator: "\n").contains { $0.contains("ghost") && $0.contains("but was written by") },
                "alice logged: \(alice.stderr)")
        #expect(s.roomCounters?.callersAnswered == 1, "\(alice.stdout)")
        #expect(s.legs.contains { $0.remote == "trudy" }, "\(alice.stdout)")
        #expect(alice.stderr.contains("leg with trudy started on its offer: trudy has no presence record"),
                "alice logged: \(alice.stderr)")
        let bobSummary = try summary(bob)
        #expect(!bobSummary.legs.contains { $0.remote == "trudy" } && bobSummary.roomCounters?.callersAnswered == 0,
                "\(bob.stdout)")
    }

    @Test("a 6th joiner leaves by itself with a clear message, exit 1")
    func sixthJoiner() async throws {
        let daemon = try DaemonProcess(arguments: ["--memory"])
        let room = try RoomID("room_meshful1")
        for user in ["alice", "bob", "carol", "dave", "erin"] { try await present(user, room: room, daemon) }
        let frank = try await member("frank", room: room, daemon, ["--peers", "5"])
        defer { frank.kill() }
        let status = try await offPool { frank.wait(seconds: 30) }
        #expect(status == 1, "frank: \(frank.stderr)\n\(frank.stdout)")
        let s = try summary(frank)
        #expect(s.outcome == "failed")
        #expect(s.reason?.contains("the room is full: we joined as member 6 and at most 5 may be in the call") == true,
                "\(frank.stdout)")
        #expect(s.legs.isEmpty)
    }

    /// A malformed moment or one with --remote is a usage error; one long past, one beyond the connect timeout,
    /// and standard input closed before a moment came each fail clearly, exit 1.
    @Test("peer --join-at: bad moments refused (exit 2), moments that cannot be kept fail clearly (exit 1)")
    func joinMoment() throws {
        let directory = NSTemporaryDirectory() + "zonertc-join-at-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let member = ["peer", "--store", "embedded:\(directory)", "--room", "room_joinat01", "--me", "alice", "--owner",
                      "--connect-timeout", "5s", "--json"]
        let malformed = try ZonertcProcess.run(member + ["--join-at", "soon"])
        #expect(malformed.status == 2 && malformed.stderr.contains("give milliseconds since 1970"), "\(malformed.stderr)")
        let withRemote = try ZonertcProcess.run(["peer", "--store", "embedded:\(directory)", "--room", "room_joinat01",
                                                 "--me", "alice", "--remote", "bob", "--owner", "--join-at", "stdin"])
        #expect(withRemote.status == 2 && withRemote.stderr.contains("--join-at is for a group call"),
                "\(withRemote.stderr)")
        let past = try ZonertcProcess.run(member + ["--join-at", "1000"])
        #expect(past.status == 1 && past.stderr.contains("the join moment 1000 passed"), "\(past.stderr)")
        let tooLate = String(WallClock().now().millisecondsSinceEpoch + 3_600_000)
        let beyond = try ZonertcProcess.run(member + ["--join-at", tooLate])
        #expect(beyond.status == 1 && beyond.stderr.contains("after the connect timeout's end"), "\(beyond.stderr)")
        // Prepared (the store opened, the room made), then standard input (/dev/null here) ends: no moment.
        let closed = try ZonertcProcess.run(member + ["--join-at", "stdin"])
        #expect(closed.status == 1, "\(closed.stderr)")
        #expect(closed.stderr.contains("zonertc peer: prepared; waiting for the join moment"), "\(closed.stderr)")
        #expect(closed.stderr.contains("no join moment on standard input"), "\(closed.stderr)")
        #expect(try summaryOf(closed.stdout).outcome == "failed")
    }

    private func summaryOf(_ stdout: String) throws -> Summary {
        let line = stdout.split(separator: "\n").last.map(String.init) ?? ""
        return try JSONDecoder().decode(Summary.self, from: Data(line.utf8))
    }
}
