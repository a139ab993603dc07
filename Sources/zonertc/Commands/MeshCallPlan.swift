import Foundation
import Media
import Peer
import ZoneCore

/// One `zonertc call FILE --peers N` run with N ≥ 3: a store daemon and N `zonertc peer` processes in one
/// room's group call, each sending FILE on every leg; all N(N−1) directed streams are checked
/// frame-identical (per-frame checksums), and the time until every peer had a frame from every other.
struct MeshCallPlan {
    /// The members, in the order they are started: the first owns the room.
    static let names = ["alice", "bob", "carol", "dave", "erin"]

    var file: String
    var peers: Int
    var sync: String
    var push: String
    var pace: String
    var timeout: Duration
    var keep: String?
    /// Keep every received stream here, DIR/RECEIVER/from-SENDER (one file per sender at each receiver).
    var record: String?
    var json: Bool
    var mediaSecurity: String = MediaProtectionMode.defaultName
    /// Every member sends only through a TURN relay: `turn`'s, or one this command starts.
    var relayOnly = false
    /// The user's TURN relay, `USER:PASS@HOST:PORT` (checked already).
    var turn: String?

    /// One directed stream: what the sender sent on the leg, what the receiver got on it.
    struct Stream: Encodable {
        var from: String
        var to: String
        var framesSent: Int
        var framesReceived: Int
        var identical: Bool
        /// When the receiver had its first frame, ms after its leg started.
        var firstFrameMs: Double?
    }

    struct Report: Encodable {
        var peers: Int
        var members: [MeshPeerSummary?]
        var streams: [Stream]
        /// How long after joining the slowest peer had a frame from every other member.
        var timeToAllPairsMs: Double?
        /// How long after the last member joined every member had a frame from every other: the same end,
        /// without the spread of the members' start-up (processes started together on a shared machine).
        var timeToAllPairsFromLastJoinMs: Double?
        /// Where each member's time went, from the moment the first member was started.
        var breakdown: [Breakdown] = []
        /// CPU milliseconds spent from the joins until every member had a frame from every other: the members'
        /// (each from its join to its own last first frame, summed) and the store daemon's (from the release
        /// to the last member's last first frame). With C cores the window is at least their sum over C.
        var cpuToAllPairs: CPUInWindow?
        var verdict: CallPlan.Verdict
    }

    struct CPUInWindow: Encodable {
        var membersMs: Double
        var storeMs: Double?
        var perMemberMs: [Double]
    }

    /// One member's way to all its pairs, in milliseconds after the first member was started: its process
    /// started, its command began (store opened next, then the room set up), it joined, and the last of
    /// its legs started, had both descriptions, connected and had a first frame.
    struct Breakdown: Encodable {
        var member: String
        var spawned: Double
        var launched: Double?
        /// The steps between running and joining (`MeshPeerSummary.Startup`), on the same clock.
        var storeOpened: Double?
        var roomReady: Double?
        var mediaRead: Double?
        var socketsBound: Double?
        var securityReady: Double?
        var joined: Double?
        var lastLegStarted: Double?
        var lastSignaled: Double?
        var lastConnected: Double?
        var lastFirstFrame: Double?

        init(member: String, spawnedAtMs: Int64, origin: Int64, summary: MeshPeerSummary?) {
            self.member = member
            spawned = Double(spawnedAtMs - origin)
            launched = summary?.launchedAtMs.map { Double($0 - origin) }
            func step(_ value: (MeshPeerSummary.Startup) -> Double?) -> Double? {
                guard let launched, let startup = summary?.startup, let ms = value(startup) else { return nil }
                return launched + ms
            }
            storeOpened = step(\.storeOpened)
            roomReady = step(\.roomReady)
            mediaRead = step(\.mediaRead)
            socketsBound = step(\.socketsBound)
            securityReady = step(\.securityReady)
            let join = summary?.startedAtMs.map { Double($0 - origin) }
            joined = join
            func last(_ value: (MeshPeerSummary.Timeline) -> Double?) -> Double? {
                guard let join, let legs = summary?.legs, !legs.isEmpty else { return nil }
                let values = legs.compactMap { $0.sinceJoin.flatMap(value) }
                return values.count == legs.count ? values.max().map { join + $0 } : nil
            }
            lastLegStarted = last(\.started)
            lastSignaled = last(\.signaled)
            lastConnected = last(\.connected)
            lastFirstFrame = last(\.firstFrame)
        }

        var text: String {
            func at(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "–" }
            return "  \(member)".padding(toLength: 9, withPad: " ", startingAt: 0)
                + "spawned \(at(spawned)), running \(at(launched)), room ready \(at(roomReady)), "
                + "joined \(at(joined)); last leg started "
                + "\(at(lastLegStarted)), signaled \(at(lastSignaled)), connected \(at(lastConnected)), "
                + "first frame \(at(lastFirstFrame))"
        }
    }

    func run() async -> Int32 {
        if let problem = CallWorkspace.unstreamable(file) {
            Terminal.error("zonertc call: \(problem)")
            return 1
        }
        let workspace = CallWorkspace(keep: keep, prefix: "zonertc-mesh")
        let directory = workspace.directory, group = workspace.group
        let received = record ?? "\(directory)/received"
        func cleanUp() async { await workspace.cleanUp() }
        func failure(_ message: String) async -> Int32 {
            let logs = workspace.logs
            Terminal.error("zonertc call: \(message)" + (logs.isEmpty ? "" : "\n\(logs)"))
            if json {
                let report = Report(peers: peers, members: [], streams: [], timeToAllPairsMs: nil,
                                    verdict: CallPlan.Verdict(ok: false, text: message))
                print((try? Terminal.json(report)) ?? "{}")
            }
            await cleanUp()
            return 1
        }
        let interrupt = InterruptWatch { group.signal(SIGTERM) }
        defer { interrupt.cancel() }
        let url: String
        do throws(CallSetupError) { url = try await workspace.startStore(push: push) } catch {
            return await failure(error.message)
        }
        let names = Array(Self.names.prefix(peers))
        let tokens: [String: String]
        do {
            tokens = try await TokenFile.register(names, storeURL: url, directory: directory, newStore: keep == nil)
        } catch {
            return await failure("cannot register the members: \(error)")
        }
        var relay: [String] = []
        if let turn {
            relay = ["--turn", turn] + (relayOnly ? ["--relay-only"] : [])
        } else if relayOnly {
            do throws(CallSetupError) { relay = ["--turn", try await workspace.startRelay(), "--relay-only"] } catch {
                return await failure(error.message)
            }
        }
        let room = CallWorkspace.newRoomName()
        let common = relay + ["--store", url, "--room", room, "--sync", sync, "--json", "--pace", pace, "--send", file,
                      "--peers", String(peers), "--media-security", mediaSecurity,
                      "--connect-timeout", "\(Int(timeout.components.seconds))s",
                      "--media-timeout", "\(Int(timeout.components.seconds))s"]
        var children: [ChildProcess] = []
        var spawnedAtMs: [Int64] = []
        for (index, name) in names.enumerated() {
            let role = index == 0 ? ["--owner"] : ["--room-owner", names[0]]
            let arguments = ["peer", "--me", name, "--token-file", tokens[name]!, "--record", "\(received)/\(name)",
                             "--seed", String(index + 1), "--join-at", "stdin"] + role + common
            spawnedAtMs.append(WallClock().now().millisecondsSinceEpoch)
            do {
                children.append(try ChildProcess(name: name, arguments: arguments, directory: directory, input: true))
            } catch {
                return await failure("cannot start \(name): \(error)")
            }
            group.children.append(children[index])
        }
        let storeCPU = workspace.group.children.first { $0.name == "store" }.map { ProcessCPUSampler(pid: $0.process.processIdentifier) }
        await Self.joinTogether(children, limit: timeout, releasing: { storeCPU?.start() })
        let statuses = await CallWorkspace.waitForPeers(children, limit: timeout + .seconds(10))
        storeCPU?.stop()
        let summaries = children.map { MeshPeerSummary(lastLineOf: $0.stdout) }
        if statuses.contains(where: { $0 == nil }) {
            return await failure("a member did not end within \(timeout)")
        }
        let (streams, verdict) = Self.verdict(names: names, summaries: summaries, statuses: statuses.map { $0! })
        let slowest = summaries.compactMap { $0?.allPairsMs }
        let allPairs = slowest.count == peers ? slowest.max() : nil
        let fromLastJoin = Self.timeFromLastJoin(summaries)
        let breakdown = names.indices.map {
            Breakdown(member: names[$0], spawnedAtMs: spawnedAtMs[$0], origin: spawnedAtMs[0], summary: summaries[$0])
        }
        let cpu = Self.cpuInWindow(summaries, store: storeCPU)
        if json {
            print((try? Terminal.json(Report(peers: peers, members: summaries, streams: streams,
                                             timeToAllPairsMs: allPairs,
                                             timeToAllPairsFromLastJoinMs: fromLastJoin, breakdown: breakdown,
                                             cpuToAllPairs: cpu, verdict: verdict))) ?? "{}")
        } else {
            for (child, summary) in zip(children, summaries) {
                print("== \(child.name)")
                print(summary?.text ?? child.stdout)
            }
            print("== pairs")
            for s in streams {
                print("  \(s.from)→\(s.to)".padding(toLength: 18, withPad: " ", startingAt: 0)
                      + "\(s.framesReceived)/\(s.framesSent) frames \(s.identical ? "identical" : "DIFFER"), "
                      + "first frame \(PeerSummary.ms(s.firstFrameMs))")
            }
            print("  time to all pairs \(PeerSummary.ms(allPairs)) (from each member's join; from the last "
                  + "member's join \(PeerSummary.ms(fromLastJoin)))")
            if let cpu {
                print("  CPU from the joins to all pairs: members \(PeerSummary.ms(cpu.membersMs)) ("
                      + cpu.perMemberMs.map { String(format: "%.1f", $0) }.joined(separator: ", ")
                      + "), store daemon \(PeerSummary.ms(cpu.storeMs))")
            }
            print("== timeline (ms after the first member was started)")
            for line in breakdown { print(line.text) }
            print(verdict.text)
        }
        if !verdict.ok {
            for child in children where !child.stderr.isEmpty {
                Terminal.error("--- \(child.name) stderr:\n\(child.stderr)")
            }
        }
        await cleanUp()
        return verdict.ok ? 0 : 1
    }

    /// A prepared start: every member does all that does not show it in the call (`zonertc peer --join-at
    /// stdin`), and once all have said so (or exited, or `limit` passed) they are all given the same moment,
    /// now, to join. Without it the members' joins spread over the tens of milliseconds their processes
    /// take to start and prepare on a shared machine, and the first joiner's time includes the others'.
    /// `ready`, when given, is waited for too once all are prepared (bounded by the same end): another member that
    /// must be in the room first (the browser's page).
    static func joinTogether(_ children: [ChildProcess], limit: Duration,
                             ready: ((ContinuousClock.Instant) async -> Bool)? = nil,
                             releasing: () -> Void = {}) async {
        let end = ContinuousClock.now + limit
        for child in children {
            _ = await child.waitForErrorLine(containing: JoinMoment.preparedLine, timeout: end - ContinuousClock.now)
        }
        if let ready { _ = await ready(end) }
        releasing()
        let moment = String(WallClock().now().millisecondsSinceEpoch)
        for child in children { child.send(line: moment) }
    }

    /// The members' CPU from their joins to all pairs, and the daemon's from the release to the last member's
    /// last first frame (nil unless every member reported it).
    static func cpuInWindow(_ summaries: [MeshPeerSummary?], store: ProcessCPUSampler?) -> CPUInWindow? {
        var each: [Double] = []
        var end: Double?
        for summary in summaries {
            guard let ms = summary?.cpu?.toAllPairsMs, let joined = summary?.startedAtMs,
                  let allPairs = summary?.allPairsMs else { return nil }
            each.append(ms)
            end = max(end ?? 0, Double(joined) + allPairs)
        }
        guard let end else { return nil }
        return CPUInWindow(membersMs: each.reduce(0, +), storeMs: store?.used(untilWallMs: end), perMemberMs: each)
    }

    /// From the last member's join until the last member had a frame from every other (nil unless every
    /// member reported both).
    static func timeFromLastJoin(_ summaries: [MeshPeerSummary?]) -> Double? {
        var lastJoin: Int64?
        var lastDone: Double?
        for summary in summaries {
            guard let joined = summary?.startedAtMs, let allPairs = summary?.allPairsMs else { return nil }
            lastJoin = max(lastJoin ?? joined, joined)
            lastDone = max(lastDone ?? 0, Double(joined) + allPairs)
        }
        guard let lastJoin, let lastDone else { return nil }
        return lastDone - Double(lastJoin)
    }

    /// Every directed stream i→j: j's leg with i received what i's leg with j sent, frame for frame.
    static func verdict(names: [String], summaries: [MeshPeerSummary?],
                        statuses: [Int32]) -> ([Stream], CallPlan.Verdict) {
        var streams: [Stream] = []
        for (i, from) in names.enumerated() {
            for (j, to) in names.enumerated() where i != j {
                let sending = summaries[i]?.legs.last { $0.remote == to }
                let receiving = summaries[j]?.legs.last { $0.remote == from }
                let sent = sending?.media.sentDigest
                let got = receiving?.media.receivedDigest
                let identical = sent != nil && sent == got && sending?.media.framesSent == receiving?.media.framesReceived
                streams.append(Stream(from: from, to: to, framesSent: sending?.media.framesSent ?? 0,
                                      framesReceived: receiving?.media.framesReceived ?? 0, identical: identical,
                                      firstFrameMs: receiving?.firstFrameMs))
            }
        }
        for (i, status) in statuses.enumerated() where status != 0 {
            let reason = summaries[i]?.reason ?? "exit status \(status)"
            return (streams, CallPlan.Verdict(ok: false, text: "FAIL: \(names[i]) failed: \(reason)"))
        }
        let bad = streams.filter { !$0.identical }
        guard bad.isEmpty else {
            let list = bad.map { "\($0.from)→\($0.to) \($0.framesReceived)/\($0.framesSent)" }.joined(separator: ", ")
            return (streams, CallPlan.Verdict(ok: false, text: "FAIL: \(bad.count) of \(streams.count) streams differ: "
                                               + list))
        }
        let frames = streams.first?.framesSent ?? 0
        return (streams, CallPlan.Verdict(ok: true, text: "OK: \(streams.count) directed streams of \(frames) frames "
                                           + "identical among \(names.count) members"))
    }
}
