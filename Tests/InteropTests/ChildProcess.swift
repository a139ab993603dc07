// Real programs for the interop tests (coturn's turnserver and turnutils_peer, a Python driver
// for aioice), started with posix_spawnp so nothing depends on Dispatch: everything here blocks
// only the dedicated thread the test runs its scenario on. Every wait is bounded, and every
// process is stopped (SIGTERM, then SIGKILL) and reaped when the test is done with it.

import Foundation
import Glibc
import TestSupport

/// What went wrong with a real program, in words for the test log.
struct InteropFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process with an optional stdin/stdout pipe; stderr (and stdout without a pipe) go
/// to a log file that `log` reads back for failure messages.
final class ChildProcess: @unchecked Sendable {
    let arguments: [String]
    let pid: pid_t
    let logPath: String
    private var stdinFD: Int32 = -1
    private var stdoutFD: Int32 = -1
    private var buffer: [UInt8] = []
    /// Reaps the child and wakes waiters when it ends (no polling).
    private var watch: ProcessWatch!

    init(_ arguments: [String], pipes: Bool = false, logPath: String) throws {
        self.arguments = arguments
        self.logPath = logPath
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        if pipes {
            guard pipe(&input) == 0, pipe(&output) == 0 else {
                throw InteropFailure("pipe: \(String(cString: strerror(errno)))")
            }
            // Only the child's dup2'd copies may outlive exec (Glibc's Swift overlay lacks pipe2).
            for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if pipes {
            posix_spawn_file_actions_adddup2(&actions, input[0], 0)
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | (pipes ? O_TRUNC : O_APPEND),
                                         0o644)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        if pipes {
            close(input[0])
            close(output[1])
        }
        guard rc == 0 else {
            if pipes { close(input[1]); close(output[0]) }
            throw InteropFailure("cannot start \(arguments[0]): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        watch = ProcessWatch(pid: pid)
        if pipes {
            stdinFD = input[1]
            stdoutFD = output[0]
        }
    }

    deinit {
        stop()
        if stdinFD >= 0 { close(stdinFD) }
        if stdoutFD >= 0 { close(stdoutFD) }
    }

    /// The log file's contents (stderr, and stdout when not piped).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The last `lines` lines of the log, for failure messages.
    func logTail(_ lines: Int = 20) -> String {
        log.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// Writes one line to the child's stdin.
    func writeLine(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(stdinFD, $0.baseAddress, $0.count) }
            guard n > 0 else { throw InteropFailure("writing to \(arguments[0]): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    /// The child's stdout pipe, for polling beside sockets.
    var stdoutDescriptor: Int32 { stdoutFD }

    /// A complete line already read from stdout, if any (without reading more).
    func bufferedLine() -> String? {
        guard let newline = buffer.firstIndex(of: 10) else { return nil }
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
    }

    /// Reads what stdout has now (call when poll says it is readable); false at end of file.
    @discardableResult
    func readAvailable() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { read(stdoutFD, $0.baseAddress, $0.count) }
        guard n > 0 else { return false }
        buffer += chunk[..<n]
        return true
    }

    /// The next stdout line, waiting at most `timeout`; nil on timeout or end of file.
    func readLine(timeout: Duration) -> String? {
        let end = ContinuousClock.now + timeout
        while true {
            if let line = bufferedLine() { return line }
            let left = end - ContinuousClock.now
            guard left > .zero else { return nil }
            var fd = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            let ms = Int32(clamping: left.components.seconds * 1000
                + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard poll(&fd, 1, ms) > 0 else { continue }
            if !readAvailable() { return bufferedLine() }
        }
    }

    /// True once the process has exited (and is reaped).
    var hasExited: Bool { watch.exitStatus != nil }

    /// Waits up to `timeout` for the process to exit by itself; its exit status, or nil.
    func waitForExit(timeout: Duration) -> Int32? {
        watch.wait(within: timeout)
    }

    /// SIGTERM, then SIGKILL after `grace`; the process is reaped either way.
    func stop(grace: Duration = .seconds(2)) {
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        if waitForExit(timeout: grace) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: .seconds(5))
        }
    }
}

/// Files of one interop test.
enum InteropFiles {
    /// A fresh temporary directory for one test's files.
    static func temporaryDirectory(_ label: String) throws -> String {
        var template = Array("/tmp/zonertc-\(label)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw InteropFailure("mkdtemp failed") }
        return String(cString: made)
    }
}
