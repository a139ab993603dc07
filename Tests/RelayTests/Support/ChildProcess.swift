import Foundation
import Glibc
import Testing
import TestSupport

/// A program the tests start (our `zonertc`, coturn's tools, python3): its output collected from
/// pipes, waited for with a deadline (woken by its output and its exit, never by a timer), and
/// killed when the test is done with it (or when this object goes away), so no test leaves one
/// behind.
final class ChildProcess: @unchecked Sendable {
    let name: String
    private let watch: ProcessWatch

    var pid: pid_t { watch.pid }

    /// Starts `executable` (a path, or a name looked up in PATH) with `arguments`.
    init(_ executable: String, _ arguments: [String]) throws {
        name = (executable as NSString).lastPathComponent
        watch = try spawnWatched([executable] + arguments)
    }

    deinit { _ = kill(signal: SIGKILL, within: .seconds(5)) }

    /// The exit status once it has ended: the exit code, or 128 + the signal that ended it.
    var exitStatus: Int32? { watch.exitStatus }

    /// Waits up to `limit` for the program to end; its exit status, or nil if it is still running.
    /// A crash (`ChildCrash`) is a test failure whatever the status is compared with. Blocks the
    /// calling thread: call it through `offPool` from async tests.
    func wait(within limit: Duration) -> Int32? {
        let status = watch.wait(within: limit)
        if let crash = watch.crashReport { Issue.record("\(name) crashed: \(crash)") }
        return status
    }

    /// Sends `signal` and waits up to `within` for the end; SIGKILL after that. The exit status.
    @discardableResult
    func kill(signal: Int32, within limit: Duration) -> Int32 {
        if let s = exitStatus { return s }
        Glibc.kill(pid, signal)
        if let s = wait(within: limit) { return s }
        Glibc.kill(pid, SIGKILL)
        return wait(within: .seconds(5)) ?? -1
    }

    var output: String { watch.stdout }
    var errorOutput: String { watch.stderr }

    /// Waits up to `limit` for `pattern` (a regular expression) to appear in stdout or stderr;
    /// the first match, or nil.
    func waitForOutput(matching pattern: String, within limit: Duration) -> String? {
        var found: String?
        watch.wait(within: limit) { watch in
            for text in [watch.stdout, watch.stderr] {
                if let range = text.range(of: pattern, options: .regularExpression) {
                    found = String(text[range])
                    return true
                }
            }
            return false
        }
        return found
    }

    /// Waits up to `limit` until `pattern` matches at least `count` times in stdout or stderr.
    func waitForOutput(matching pattern: String, count: Int, within limit: Duration) -> Bool {
        watch.wait(within: limit) { watch in
            (watch.stdout + watch.stderr).matches(of: pattern) >= count
        }
    }
}
