import Foundation
import ZoneCore

/// Appends framed entries to the journal file and tells callers when they are durable.
///
/// `batch` and `always` run one flusher thread, so an append never waits for the disk (it is made
/// under the store's lock). In `batch` every entry appended while a sync is under way goes into the
/// next single `write` + `fdatasync`, so 16 concurrent writers pay for one sync, not 16; in `always`
/// the flusher writes and syncs the entries one at a time. `none` writes in `append`.
final class JournalWriter: @unchecked Sendable {
    /// A position in the journal: the count of entries appended so far.
    typealias LSN = UInt64

    struct IOError: Error, CustomStringConvertible {
        var description: String
    }

    let policy: FsyncPolicy
    // All fields below are guarded by `condition`.
    private let condition = NSCondition()
    private var fd: Int32
    /// `batch` and `none`: the framed entries not yet written, in order.
    private var pending: [UInt8] = []
    /// `always`: each framed entry not yet written, oldest first (each gets a sync of its own).
    private var pendingEntries = OutputQueue<[UInt8]>()
    private var appended: LSN = 0
    private var durable: LSN = 0
    private var waiters: [(LSN, CheckedContinuation<Void, Error>)] = []
    private var failure: IOError?
    private var closed = false
    private var flushing = false
    private(set) var fileSize: Int
    private(set) var syncCount: UInt64 = 0
    private var flusher: Thread?

    init(fd: Int32, fileSize: Int, policy: FsyncPolicy) {
        self.fd = fd
        self.fileSize = fileSize
        self.policy = policy
        if policy != .none {
            // The thread holds the writer until `shutdown` ends its loop.
            let t = Thread { self.flushLoop() }
            t.name = "zonertc-journal"
            flusher = t
            t.start()
        }
    }

    /// Appends one entry; returns its LSN. In `none` mode the entry is written before this returns;
    /// otherwise the flusher writes it.
    func append(_ payload: [UInt8]) throws(IOError) -> LSN {
        condition.lock()
        if let failure {
            condition.unlock()
            throw failure
        }
        appended += 1
        switch policy {
        case .batch:
            JournalFormat.frame(payload, into: &pending)
        case .always:
            var entry: [UInt8] = []
            JournalFormat.frame(payload, into: &entry)
            pendingEntries.append(entry)
        case .none:
            defer { condition.unlock() }
            JournalFormat.frame(payload, into: &pending)
            let bytes = pending
            pending.removeAll(keepingCapacity: true)
            do {
                try writeAll(bytes)
            } catch {
                failure = error
                throw error
            }
            durable = appended
            return appended
        }
        let lsn = appended
        condition.unlock()
        // The flusher is woken once the lock is free: woken while it is held, it would only block on it
        // again (two more futex calls and a context switch per append).
        condition.broadcast()
        return lsn
    }

    /// The LSN of the newest appended entry.
    var lastAppended: LSN {
        condition.lock(); defer { condition.unlock() }
        return appended
    }

    /// Returns once entry `lsn` (and all before it) is durable under the policy.
    func waitDurable(_ lsn: LSN) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            condition.lock()
            if let failure {
                condition.unlock()
                c.resume(throwing: failure)
            } else if durable >= lsn {
                condition.unlock()
                c.resume()
            } else {
                waiters.append((lsn, c))
                condition.unlock()
            }
        }
    }

    /// Writes and syncs everything appended so far, on the caller's thread (compaction, close).
    func flushNow() throws(IOError) {
        condition.lock()
        while flushing { condition.wait() }
        var bytes = pending
        pending.removeAll(keepingCapacity: true)
        while let entry = pendingEntries.pop() { bytes += entry }
        let target = appended
        var ready: [CheckedContinuation<Void, Error>] = []
        do {
            if !bytes.isEmpty { try writeAll(bytes) }
            if policy != .none { try sync() }
            durable = target
            ready = takeWaiters()
            condition.unlock()
        } catch {
            failure = error
            let all = waiters.map(\.1)
            waiters.removeAll()
            condition.unlock()
            for c in all { c.resume(throwing: error) }
            throw error
        }
        for c in ready { c.resume() }
    }

    /// Points the writer at a new file (after compaction). Call after `flushNow`.
    func switchFile(fd newFD: Int32, fileSize: Int) {
        condition.lock()
        let old = fd
        fd = newFD
        self.fileSize = fileSize
        condition.unlock()
        close(old)
    }

    /// Flushes, stops the flusher thread and closes the file.
    func shutdown() {
        try? flushNow()
        condition.lock()
        closed = true
        condition.broadcast()
        let fd = self.fd
        self.fd = -1
        condition.unlock()
        if fd >= 0 { close(fd) }
    }

    // MARK: Inside the lock

    private func takeWaiters() -> [CheckedContinuation<Void, Error>] {
        var ready: [CheckedContinuation<Void, Error>] = []
        waiters.removeAll { entry in
            if entry.0 <= durable { ready.append(entry.1); return true }
            return false
        }
        return ready
    }

    private func writeAll(_ bytes: [UInt8]) throws(IOError) {
        try writeAllUnlocked(bytes)
        fileSize += bytes.count
    }

    private func sync() throws(IOError) {
        try syncUnlocked()
        syncCount += 1
    }

    // MARK: The flusher thread (batch)

    private func flushLoop() {
        condition.lock()
        while true {
            while pending.isEmpty && pendingEntries.isEmpty && !closed { condition.wait() }
            if closed && pending.isEmpty && pendingEntries.isEmpty { break }
            let bytes: [UInt8]
            let target: LSN
            if let first = pendingEntries.pop() {
                // One entry per sync: the oldest waiting, as `durable` counts entries in order.
                bytes = first
                target = appended - LSN(pendingEntries.count)
            } else {
                bytes = pending
                pending = []
                pending.reserveCapacity(bytes.count)
                target = appended
            }
            flushing = true
            // The disk work happens outside the lock so appends keep flowing into the next batch.
            condition.unlock()
            var error: IOError?
            do throws(IOError) {
                try writeAllUnlocked(bytes)
                try syncUnlocked()
            } catch let e {
                error = e
            }
            condition.lock()
            flushing = false
            var ready: [CheckedContinuation<Void, Error>] = []
            var failed: [CheckedContinuation<Void, Error>] = []
            if let error {
                failure = error
                failed = waiters.map(\.1)
                waiters.removeAll()
            } else {
                fileSize += bytes.count
                syncCount += 1
                durable = target
                ready = takeWaiters()
            }
            condition.broadcast()
            condition.unlock()
            for c in ready { c.resume() }
            for c in failed { c.resume(throwing: error!) }
            condition.lock()
            if failure != nil { break }
        }
        condition.unlock()
    }

    private func writeAllUnlocked(_ bytes: [UInt8]) throws(IOError) {
        if let problem = writeFully(fd, bytes) { throw IOError(description: "journal write failed: \(problem)") }
    }

    private func syncUnlocked() throws(IOError) {
        if fdatasync(fd) != 0 {
            throw IOError(description: "journal fdatasync failed: \(String(cString: strerror(errno)))")
        }
    }
}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR; the system's reason on failure.
public func writeFully(_ fd: Int32, _ bytes: [UInt8]) -> String? {
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
        if n < 0 {
            if errno == EINTR { continue }
            return String(cString: strerror(errno))
        }
        done += n
    }
    return nil
}
