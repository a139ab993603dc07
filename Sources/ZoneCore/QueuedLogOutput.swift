import Foundation
import Glibc
import Synchronization

/// Log lines on their way to a file descriptor, written by a thread of their own so that whoever
/// logs never waits for the reader: a full pipe or a slow terminal stalls only the writer thread.
///
/// Lines queue up to `capacityBytes`; past that a line is dropped and counted, and once the output
/// moves again a line says how many were lost. Each line still leaves in one `write(2)`, so lines
/// never interleave within a line on a pipe (up to `PIPE_BUF`).
public final class QueuedLogOutput: Sendable {
    private struct Queue: ~Copyable {
        var lines: [String] = []
        var bytes = 0
        /// Dropped since the last report line.
        var unreported = 0
        var writing = false
    }

    /// Standard error's queue, which `LogSink.standardError` (the default sink) feeds.
    public static let standardError = QueuedLogOutput(fd: STDERR_FILENO)

    public let fd: Int32
    public let capacityBytes: Int
    private let queue = Mutex(Queue())
    private let ready = NSCondition()
    private let dropped = Atomic<Int>(0)

    public init(fd: Int32, capacityBytes: Int = 1 << 20) {
        self.fd = fd
        self.capacityBytes = capacityBytes
        let thread = Thread { [self] in self.drain() }
        thread.name = "zonertc-log"
        thread.start()
    }

    /// Lines dropped so far because the output did not keep up.
    public var droppedLines: Int { dropped.load(ordering: .relaxed) }

    /// Queues one line; drops it (and counts it) when the queue is full. Never blocks on the output.
    public func enqueue(_ line: String) {
        let accepted = queue.withLock { q -> Bool in
            let size = line.utf8.count
            guard q.bytes + size <= capacityBytes else {
                q.unreported += 1
                return false
            }
            q.lines.append(line)
            q.bytes += size
            return true
        }
        if !accepted {
            dropped.add(1, ordering: .relaxed)
            return
        }
        ready.lock()
        ready.signal()
        ready.unlock()
    }

    /// Waits until everything queued so far is written, or `limit` passes; whether it was written.
    /// For a program's last lines before it exits: a stalled reader cannot hold the exit for longer.
    @discardableResult
    public func flush(within limit: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(limit.nanoseconds) / 1e9)
        ready.lock()
        defer { ready.unlock() }
        while queue.withLock({ !$0.lines.isEmpty || $0.writing }) {
            ready.broadcast()
            if !ready.wait(until: deadline) { return queue.withLock { $0.lines.isEmpty && !$0.writing } }
        }
        return true
    }

    private func drain() {
        while true {
            ready.lock()
            var batch: [String] = []
            var lost = 0
            while batch.isEmpty {
                (batch, lost) = queue.withLock { q -> ([String], Int) in
                    defer {
                        q.lines.removeAll(keepingCapacity: true)
                        q.bytes = 0
                        q.unreported = 0
                        q.writing = true
                    }
                    return (q.lines, q.unreported)
                }
                if batch.isEmpty && lost == 0 {
                    queue.withLock { $0.writing = false }
                    ready.broadcast()
                    ready.wait()
                } else {
                    break
                }
            }
            ready.unlock()
            if lost > 0 {
                write("zonertc log: dropped \(lost) line\(lost == 1 ? "" : "s") (the log output was not read fast enough)\n")
            }
            for line in batch { write(line) }
        }
    }

    private func write(_ line: String) { LogSink.writeWhole(line, to: fd) }
}
