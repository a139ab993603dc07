import Foundation

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
}

/// A step of setting up a call on this machine failed: what to tell the user.
struct CallSetupError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
