import Foundation
import Glibc

/// A program the tests start (our `zonertc`, coturn's tools, python3): spawned with posix_spawn,
/// its output in files so it never blocks on a full pipe, waited for with a deadline, and killed
/// when the test is done with it (or when this object goes away), so no test leaves one behind.
final class ChildProcess: @unchecked Sendable {
    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    let name: String
    let outputPath: String
    let errorPath: String
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` (a path, or a name looked up in PATH) with `arguments`.
    init(_ executable: String, _ arguments: [String]) throws {
        name = (executable as NSString).lastPathComponent
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("zonertc-relay-tests")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let stem = dir.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))").path
        outputPath = stem + ".out"
        errorPath = stem + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let r = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
        guard r == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(r)))")
        }
        self.pid = pid
    }

    deinit { _ = kill(signal: SIGKILL, within: .seconds(5)) }

    /// The exit status once it has ended: the exit code, or 128 + the signal that ended it.
    var exitStatus: Int32? {
        lock.lock()
        defer { lock.unlock() }
        if status == nil {
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid {
                status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            }
        }
        return status
    }

    /// Waits up to `limit` for the program to end; its exit status, or nil if it is still running.
    /// Blocks the calling thread: call it through `offPool` from async tests.
    func wait(within limit: Duration) -> Int32? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let s = exitStatus { return s }
            usleep(5_000)
        }
        return exitStatus
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

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits up to `limit` for `pattern` (a regular expression) to appear in stdout or stderr;
    /// the first match, or nil.
    func waitForOutput(matching pattern: String, within limit: Duration) -> String? {
        let deadline = ContinuousClock.now + limit
        repeat {
            for text in [output, errorOutput] {
                if let range = text.range(of: pattern, options: .regularExpression) { return String(text[range]) }
            }
            if exitStatus != nil { break }
            usleep(5_000)
        } while ContinuousClock.now < deadline
        for text in [output, errorOutput] {
            if let range = text.range(of: pattern, options: .regularExpression) { return String(text[range]) }
        }
        return nil
    }
}

/// Runs blocking work (waiting for processes, blocking sockets) on a thread of its own, so
/// async tests never hold a thread of the shared cooperative pool while they wait.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}
