// Waiting for a child process without sleeping: one thread blocks in waitpid and one per pipe
// blocks in read; each wakes the waiters on a condition when something happens (output arrived,
// the process ended), so a test waits exactly as long as the child takes, bounded by a deadline.
import CSystem
import Foundation
import Glibc

/// Watches a spawned child: its exit (reaped here, nowhere else) and, optionally, its stdout and
/// stderr pipes, whose bytes it collects.
public final class ProcessWatch: @unchecked Sendable {
    public let pid: pid_t
    private let condition = NSCondition()
    private var status: Int32?
    private var captured: [[UInt8]] = [[], []]
    private var openPipes = 0
    /// Counts events (output read, pipe closed, exit), so a waiter can tell whether one happened
    /// while it was looking at the output without holding the lock.
    private var events = 0

    /// Starts watching `pid`; `stdout`/`stderr` are read ends of pipes this object now owns.
    public init(pid: pid_t, stdout: Int32? = nil, stderr: Int32? = nil) {
        self.pid = pid
        for (index, fd) in [stdout, stderr].enumerated() {
            guard let fd else { continue }
            openPipes += 1
            Thread.detachNewThread { [self] in self.drain(fd, into: index) }
        }
        Thread.detachNewThread { [self] in
            var raw: Int32 = 0
            var r: pid_t
            repeat { r = waitpid(pid, &raw, 0) } while r < 0 && errno == EINTR
            let decoded: Int32 = r == pid ? (raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)) : -1
            condition.lock()
            status = decoded
            events += 1
            condition.broadcast()
            condition.unlock()
        }
    }

    private func drain(_ fd: Int32, into index: Int) {
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            condition.lock()
            if n > 0 { captured[index] += chunk[..<n] } else { openPipes -= 1 }
            events += 1
            condition.broadcast()
            condition.unlock()
            if n <= 0 { break }
        }
        close(fd)
    }

    /// The exit status once the child has ended (the exit code, or 128 + the signal), else nil.
    public var exitStatus: Int32? {
        condition.lock()
        defer { condition.unlock() }
        return status
    }

    /// How the child crashed, or nil (see `ChildCrash`).
    public var crashReport: String? { ChildCrash.report(status: exitStatus, stderr: stderr) }

    /// What the child wrote to its stdout and stderr pipes so far.
    public var stdout: String { text(0) }
    public var stderr: String { text(1) }

    private func text(_ index: Int) -> String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: captured[index], as: UTF8.self)
    }

    /// Waits until `predicate` holds (checked after every event), the child has ended and its
    /// pipes are drained, or `limit` passes. Returns whether the predicate held.
    @discardableResult
    public func wait(within limit: Duration, until predicate: (ProcessWatch) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(Double(limit.components.seconds)
                                                 + Double(limit.components.attoseconds) / 1e18)
        while true {
            // The predicate reads the output under the lock, so it runs without holding it; an event
            // that arrives meanwhile must not be slept through (a child that prints its last line
            // then would leave the wait asleep until its next one, or the deadline).
            condition.lock()
            let seen = events
            condition.unlock()
            if predicate(self) { return true }
            condition.lock()
            let finished = status != nil && openPipes == 0
            let woke = events != seen || (!finished && condition.wait(until: deadline))
            condition.unlock()
            if !woke { return predicate(self) }
        }
    }

    /// Waits up to `limit` for the child to end (its pipes drained); the exit status, or nil.
    public func wait(within limit: Duration) -> Int32? {
        wait(within: limit) { $0.hasFinished }
        return exitStatus
    }

    private var hasFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return status != nil && openPipes == 0
    }
}

/// A child's end that only a fault explains. A program can print the line a test looks for and
/// then crash on its way out (a `zonertc peer` did, in OpenSSL's exit handlers): a test that reads
/// the output must not take that run for a success, so the wait helpers check this too.
public enum ChildCrash {
    /// Signals raised by faults (a Swift trap is SIGILL or SIGTRAP), never sent by the tests.
    public static let faultSignals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV]

    /// Why a child with exit `status` (the code, or 128 + the signal) and `stderr` crashed, or nil:
    /// it ended on a fault signal, or the Swift runtime's crash report is in its stderr.
    public static func report(status: Int32?, stderr: String) -> String? {
        if let status, status > 128, faultSignals.contains(status - 128) {
            return "ended on signal \(status - 128): \(stderr.suffix(2000))"
        }
        if let banner = stderr.range(of: "*** Program crashed") {
            return "the Swift runtime reported a crash: \(stderr[banner.lowerBound...].prefix(2000))"
        }
        return nil
    }
}

/// Starts `arguments[0]` (a path, or a name looked up in PATH) with stdin from /dev/null (or
/// `stdin`, a read end it dups), stdout and stderr into pipes a `ProcessWatch` collects; `environment`
/// sets variables on top of this process's own. With `defaultSignals` the child starts with no signal
/// blocked and every signal's default action: a child spawned from a Dispatch thread otherwise inherits
/// that thread's mask, with SIGTERM blocked, and so would its own children (a shell's `cat`, `curl`).
public func spawnWatched(_ arguments: [String], stdin: Int32? = nil, environment: [String: String] = [:],
                         defaultSignals: Bool = false) throws -> ProcessWatch {
    var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
    guard cs_pipe_cloexec(&out) == 0, cs_pipe_cloexec(&err) == 0 else {
        throw SpawnFailure("pipe: \(String(cString: strerror(errno)))")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let stdin {
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    posix_spawn_file_actions_adddup2(&actions, out[1], 1)
    posix_spawn_file_actions_adddup2(&actions, err[1], 2)
    for fd in [out[0], err[0]] { posix_spawn_file_actions_addclose(&actions, fd) }
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var variables = ProcessInfo.processInfo.environment
    for (name, value) in environment { variables[name] = value }
    let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in envp { free(p) } }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    if defaultSignals {
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }
    var pid: pid_t = 0
    let r = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
    close(out[1])
    close(err[1])
    guard r == 0 else {
        close(out[0])
        close(err[0])
        throw SpawnFailure("cannot start \(arguments[0]): \(String(cString: strerror(r)))")
    }
    return ProcessWatch(pid: pid, stdout: out[0], stderr: err[0])
}

/// A child that could not be started.
public struct SpawnFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs blocking work (waiting for processes, blocking sockets) on a thread of its own, so async
/// tests never hold a thread of the shared cooperative pool while they wait.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20  // scenarios drive whole ICE/TURN machines on this thread
        thread.start()
    }
}

extension String {
    /// How many non-overlapping matches of the regular expression `pattern` this text holds.
    public func matches(of pattern: String) -> Int {
        var count = 0
        var rest = startIndex..<endIndex
        while let range = self.range(of: pattern, options: .regularExpression, range: rest) {
            count += 1
            rest = range.upperBound..<endIndex
            if range.isEmpty { break }
        }
        return count
    }
}
