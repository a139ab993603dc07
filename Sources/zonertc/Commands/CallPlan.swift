import Foundation
import Media
import Peer
import ZoneCore

/// One `zonertc call` run: the processes it starts, what it checks, what it prints.
struct CallPlan {
    var file: String
    var bothWays: Bool
    var sync: String
    var push: String
    var pace: String
    var relayOnly: Bool
    /// The user's TURN relay, `USER:PASS@HOST:PORT` (checked already); nil: ours when relay-only.
    var turn: String?
    var impair: String?
    var timeout: Duration
    var keep: String?
    var json: Bool
    /// Both peers' `--media-security`.
    var mediaSecurity: String = MediaProtectionMode.defaultName

    struct Verdict: Encodable {
        var ok: Bool
        var text: String
    }

    struct Report: Encodable {
        var alice: PeerSummary?
        var bob: PeerSummary?
        var verdict: Verdict
    }

    func run() async -> Int32 {
        // A file that does not read is the user's to fix: say so before starting anything.
        if let problem = CallWorkspace.unstreamable(file) {
            Terminal.error("zonertc call: \(problem)")
            return 1
        }
        let workspace = CallWorkspace(keep: keep, prefix: "zonertc-call")
        let directory = workspace.directory, group = workspace.group
        func cleanUp() async { await workspace.cleanUp() }
        func failure(_ message: String) async -> Int32 {
            let logs = workspace.logs
            Terminal.error("zonertc call: \(message)" + (logs.isEmpty ? "" : "\n\(logs)"))
            if json { print((try? Terminal.json(Report(alice: nil, bob: nil, verdict: Verdict(ok: false, text: message)))) ?? "{}") }
            await cleanUp()
            return 1
        }
        let interrupt = InterruptWatch { group.signal(SIGTERM) }
        defer { interrupt.cancel() }

        // The store daemon on a free loopback port.
        let url: String
        do throws(CallSetupError) { url = try await workspace.startStore(push: push) } catch {
            return await failure(error.message)
        }

        var common = ["--store", String(url), "--room", CallWorkspace.newRoomName(), "--sync", sync, "--json",
                      "--pace", pace, "--connect-timeout", "\(Int(timeout.components.seconds))s"]
        if let impair { common += ["--impair", impair] }
        common += ["--media-security", mediaSecurity]
        if let turn {
            common += ["--turn", turn] + (relayOnly ? ["--relay-only"] : [])
        } else if relayOnly {
            do throws(CallSetupError) { common += ["--turn", try await workspace.startRelay(), "--relay-only"] } catch {
                return await failure(error.message)
            }
        }
        // The daemon hands each user's token out once: register both here and give each peer its file.
        let tokens: [String: String]
        do {
            tokens = try await TokenFile.register(["alice", "bob"], storeURL: String(url), directory: directory,
                                                  newStore: keep == nil)
        } catch {
            return await failure("cannot register the peers' users: \(error)")
        }
        var alice = common + ["--me", "alice", "--remote", "bob", "--owner", "--send", file,
                              "--token-file", tokens["alice"]!]
        var bob = common + ["--me", "bob", "--remote", "alice", "--record", "\(directory)/bob-received",
                            "--token-file", tokens["bob"]!]
        if bothWays {
            alice += ["--record", "\(directory)/alice-received"]
            bob += ["--send", file]
        }
        let peers: [ChildProcess]
        do {
            peers = [try ChildProcess(name: "alice", arguments: ["peer"] + alice, directory: directory),
                     try ChildProcess(name: "bob", arguments: ["peer"] + bob, directory: directory)]
            group.children += peers
        } catch { return await failure("cannot start the peers: \(error)") }
        let statuses = await CallWorkspace.waitForPeers(peers, limit: timeout + .seconds(10))
        let summaries = peers.map { PeerSummary(lastLineOf: $0.stdout) }
        if statuses.contains(where: { $0 == nil }) {
            return await failure("a peer did not end within \(timeout)")
        }
        let verdict = Self.verdict(summaries: summaries, statuses: statuses.map { $0! }, bothWays: bothWays)
        if json {
            print((try? Terminal.json(Report(alice: summaries[0], bob: summaries[1], verdict: verdict))) ?? "{}")
        } else {
            for (peer, summary) in zip(peers, summaries) {
                print("== \(peer.name)")
                print(summary?.text ?? peer.stdout)
            }
            print(verdict.text)
        }
        if !verdict.ok {
            for peer in peers where !peer.stderr.isEmpty { Terminal.error("--- \(peer.name) stderr:\n\(peer.stderr)") }
        }
        await cleanUp()
        return verdict.ok ? 0 : 1
    }

    /// The frames each receiver got must be the frames the other side sent.
    static func verdict(summaries: [PeerSummary?], statuses: [Int32], bothWays: Bool) -> Verdict {
        let names = ["alice", "bob"]
        for (i, status) in statuses.enumerated() where status != 0 {
            let reason = summaries[i]?.reason ?? "exit status \(status)"
            return Verdict(ok: false, text: "FAIL: \(names[i]) failed: \(reason)")
        }
        var checks: [(from: Int, to: Int)] = [(0, 1)]
        if bothWays { checks.append((1, 0)) }
        var parts: [String] = []
        for (from, to) in checks {
            let sent = summaries[from]?.media?.sentDigest
            let received = summaries[to]?.media?.receivedDigest
            let sentFrames = summaries[from]?.media?.framesSent ?? 0
            let receivedFrames = summaries[to]?.media?.framesReceived ?? 0
            guard let sent, let received, sent == received, sentFrames == receivedFrames else {
                return Verdict(ok: false, text: "FAIL: \(names[to]) received \(receivedFrames) frames "
                               + "(digest \(received ?? "none")), \(names[from]) sent \(sentFrames) "
                               + "(digest \(sent ?? "none"))")
            }
            parts.append("\(names[from])→\(names[to]) \(sentFrames) frames identical (\(sent.prefix(16)))")
        }
        let first = summaries[1]?.firstFrameMs
        return Verdict(ok: true, text: "OK: " + parts.joined(separator: "; ")
                       + (first.map { String(format: "; first frame at %.1f ms", $0) } ?? ""))
    }
}

/// The processes of a call, reachable from a signal handler.
final class ChildGroup: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ChildProcess] = []

    var children: [ChildProcess] {
        get { lock.withLock { list } }
        set { lock.withLock { list = newValue } }
    }

    func signal(_ sig: Int32) {
        for child in children { child.signal(sig) }
    }
}
