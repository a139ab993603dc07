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
        var verdict: CallPlan.Verdict
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
        let room = CallWorkspace.newRoomName()
        let common = ["--store", url, "--room", room, "--sync", sync, "--json", "--pace", pace, "--send", file,
                      "--peers", String(peers), "--media-security", mediaSecurity,
                      "--connect-timeout", "\(Int(timeout.components.seconds))s",
                      "--media-timeout", "\(Int(timeout.components.seconds))s"]
        var children: [ChildProcess] = []
        for (index, name) in names.enumerated() {
            let role = index == 0 ? ["--owner"] : ["--room-owner", names[0]]
            let arguments = ["peer", "--me", name, "--token-file", tokens[name]!, "--record", "\(received)/\(name)",
                             "--seed", String(index + 1)] + role + common
            do { children.append(try ChildProcess(name: name, arguments: arguments, directory: directory)) } catch {
                return await failure("cannot start \(name): \(error)")
            }
            group.children.append(children[index])
        }
        let statuses = await CallWorkspace.waitForPeers(children, limit: timeout + .seconds(10))
        let summaries = children.map { MeshPeerSummary(lastLineOf: $0.stdout) }
        if statuses.contains(where: { $0 == nil }) {
            return await failure("a member did not end within \(timeout)")
        }
        let (streams, verdict) = Self.verdict(names: names, summaries: summaries, statuses: statuses.map { $0! })
        let slowest = summaries.compactMap { $0?.allPairsMs }
        let allPairs = slowest.count == peers ? slowest.max() : nil
        if json {
            print((try? Terminal.json(Report(peers: peers, members: summaries, streams: streams,
                                             timeToAllPairsMs: allPairs, verdict: verdict))) ?? "{}")
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
            print("  time to all pairs \(PeerSummary.ms(allPairs))")
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
