import Foundation
import Media
import ZoneCore

/// What a whole `zonertc call` on this machine works in: a directory (kept with --keep, else removed),
/// the child processes it starts (stopped by their PIDs, the last started first), and its store daemon.
final class CallWorkspace: Sendable {
    let directory: String
    let keep: Bool
    let group = ChildGroup()

    /// A temporary directory named after `prefix`, or `keep` (created if missing).
    init(keep: String?, prefix: String) {
        directory = keep ?? NSTemporaryDirectory() + "\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        self.keep = keep != nil
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Every child's stderr, headed by its name.
    var logs: String { group.children.map { "--- \($0.name) stderr:\n\($0.stderr)" }.joined(separator: "\n") }

    /// Stops every child and removes the directory unless kept.
    func cleanUp() async {
        for child in group.children.reversed() { await child.stop() }
        if !keep { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Starts `zonertc store serve` on a free loopback port with its data here; its URL.
    func startStore(push: String) async throws(CallSetupError) -> String {
        let store: ChildProcess
        do {
            store = try ChildProcess(name: "store", arguments: [
                "store", "serve", "--listen", "127.0.0.1:0", "--data", "\(directory)/store", "--push-profile", push,
            ], directory: directory)
            group.children.append(store)
        } catch { throw CallSetupError("cannot start the store daemon: \(error)") }
        guard let url = await store.storeURL() else { throw CallSetupError("the store daemon did not start") }
        return url
    }

    /// Starts `zonertc relay serve` on a free loopback port with a fresh password, loopback peers allowed;
    /// the `--turn` value the peers use, `USER:PASS@ADDRESS`.
    func startRelay() async throws(CallSetupError) -> String {
        let password = "pw\(UInt32.random(in: 0...UInt32.max))"
        let relay: ChildProcess
        do {
            relay = try ChildProcess(name: "relay", arguments: [
                "relay", "serve", "--listen", "127.0.0.1:0", "--user", "zonertc:\(password)",
                "--allow-loopback-peers", "--stats-interval", "0s",
            ], directory: directory)
            group.children.append(relay)
        } catch { throw CallSetupError("cannot start the relay: \(error)") }
        guard let line = await relay.waitForLine(containing: "listening on", timeout: .seconds(10)),
              let address = line.split(separator: " ").first(where: { $0.contains(":") && $0.first!.isNumber })
        else { throw CallSetupError("the relay did not start") }
        return "zonertc:\(password)@\(address)"
    }
}

extension CallWorkspace {
    /// A fresh room for one run: `room_` and 8 random hex digits, so runs against a kept store never meet.
    static func newRoomName() -> String {
        "room_" + Hex.string(UInt32.random(in: 0...UInt32.max), digits: 8)
    }

    /// Why FILE cannot be streamed (unreadable, or no frames), checked before anything starts: the
    /// user's to fix. Nil when it can.
    static func unstreamable(_ file: String) -> String? {
        do {
            let (_, frames) = try VideoFileSource.read(path: file)
            return frames.isEmpty ? "\(file) holds no frames" : nil
        } catch {
            return "cannot stream \(file): \(error)"
        }
    }

    /// Waits until every peer process has exited or `limit` has passed; each one's exit status, nil for
    /// one still running. Once a peer fails the others have someone missing to talk to: they get
    /// `grace` to finish, then are stopped.
    static func waitForPeers(_ peers: [ChildProcess], limit: Duration,
                             grace: Duration = .seconds(3)) async -> [Int32?] {
        var statuses = [Int32?](repeating: nil, count: peers.count)
        let end = ContinuousClock.now + limit
        var firstFailure: ContinuousClock.Instant?
        while statuses.contains(where: { $0 == nil }) && ContinuousClock.now < end {
            for (i, peer) in peers.enumerated() where statuses[i] == nil {
                statuses[i] = await peer.wait(timeout: .milliseconds(20))
                if let status = statuses[i], status != 0, firstFailure == nil { firstFailure = .now }
            }
            if let firstFailure, ContinuousClock.now - firstFailure > grace {
                for (i, peer) in peers.enumerated() where statuses[i] == nil {
                    await peer.stop()
                    statuses[i] = peer.process.isRunning ? nil : peer.process.terminationStatus
                }
            }
        }
        return statuses
    }
}

/// A step of setting up a call on this machine failed: what to tell the user.
struct CallSetupError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
