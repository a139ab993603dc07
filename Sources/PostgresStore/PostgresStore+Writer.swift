#if PostgreSQL
import Foundation
import RecordStore
import ZoneCore

/// A write request waiting for the writer thread: run at the log's head, answered after commit.
final class PendingWrite: @unchecked Sendable {
    let execute: (inout SharedLogReplica) -> Void
    /// nil: committed, answer with the outcome; else the error to answer with.
    let finish: (StoreError?) -> Void

    init(execute: @escaping (inout SharedLogReplica) -> Void, finish: @escaping (StoreError?) -> Void) {
        self.execute = execute
        self.finish = finish
    }
}

/// The writes waiting for the next batch.
final class WriteQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [PendingWrite] = []
    private var stopped = false

    func enqueue(_ w: PendingWrite) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return false }
        pending.append(w)
        condition.signal()
        return true
    }

    /// Up to `limit` writes, waiting at most `wait` for the first; nil once stopped and empty.
    func take(limit: Int, wait: TimeInterval) -> [PendingWrite]? {
        condition.lock()
        defer { condition.unlock() }
        if pending.isEmpty && !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: wait)) }
        if pending.isEmpty { return stopped ? nil : [] }
        let n = min(limit, pending.count)
        defer { pending.removeFirst(n) }
        return Array(pending[..<n])
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

extension PostgresStore {
    /// The writer thread: one transaction per batch of queued writes, holding the log's lock.
    func writerLoop() {
        let slot = PostgresWorkers.Slot(url: options.url, role: "zonertc-write")
        defer { slot.discard() }
        while let batch = writes.take(limit: options.maxBatch, wait: 1) {
            if core.withLock({ $0.rebuildNeeded != nil }) {
                do { try rebuild(slot) } catch {
                    slot.discard()
                    log.warning("cannot reload the log", ["error": "\(error)"])
                    let failure = unavailable("the store is reloading its log: \(error)")
                    for w in batch { w.finish(failure) }
                    continue
                }
            }
            guard !batch.isEmpty else { continue }
            commit(batch, slot)
        }
    }

    /// Runs `batch` at the log's head and appends its entry, in one transaction.
    private func commit(_ first: [PendingWrite], _ slot: PostgresWorkers.Slot) {
        var batch = first
        var ran = false
        do {
            let conn = try slot.connection()
            // Holding the head row until COMMIT orders this batch after every other writer's.
            let locked = try conn.execute("BEGIN; SELECT seq FROM zonertc_head FOR UPDATE")
            let head = locked.text(0, 0).flatMap { UInt64($0) }
            // Another daemon wrote since: read its entries first (one round trip saved when none did).
            if head != core.withLock({ $0.replica.appliedSequence }) { try catchUp(conn, deliver: true) }
            // Writes that queued while this daemon waited for the lock (another daemon's commit) join
            // the batch: the lock is the scarce thing, so each holding of it commits as much as it can.
            if batch.count < options.maxBatch, let more = writes.take(limit: options.maxBatch - batch.count, wait: 0) {
                batch += more
            }
            let applied = core.withLock { $0.replica.appliedSequence }
            guard let head, head == applied else {
                core.withLock { $0.rebuildNeeded = "the log's head is \(head.map(String.init) ?? "unreadable"), "
                                + "this replica is at \(applied)" }
                throw unavailable("the store is reloading its log")
            }
            typealias Entry = (sequence: UInt64, payload: [UInt8], notifications: [DeviceNotification])
            let sealed = core.withLock { c -> Entry? in
                ran = true
                for w in batch { w.execute(&c.replica) }
                return c.replica.sealBatch()
            }
            if let sealed {
                // The entry, the head and the NOTIFY commit together, or not at all.
                try conn.query("""
                    WITH entry AS (INSERT INTO zonertc_log (seq, entry) VALUES ($1, $2)),
                         head AS (UPDATE zonertc_head SET seq = $1)
                    SELECT pg_notify($3, $1::text)
                    """, [.int8(Int64(clamping: sealed.sequence)), .bytea(sealed.payload), .text(channel)])
            }
            try conn.execute("COMMIT")
            let ready = core.withLock { c -> [CheckedContinuation<Void, Error>] in
                if let sealed { c.committed = max(c.committed, sealed.sequence) }
                c.counters.batches += 1
                c.counters.writes += batch.count
                return takeCommittedWaiters(&c)
            }
            for w in ready { w.resume() }
            if let sealed { push.submit(sealed.notifications) }
            for w in batch { w.finish(nil) }
        } catch {
            // The outcome is unknown to us (a lost COMMIT may have committed): say so, and if the
            // replica ran the batch, rebuild it from the log, which knows.
            if let e = error as? PostgresError, e.kind == .connection { slot.discard() } else {
                _ = try? slot.connection().execute("ROLLBACK")
            }
            let failed = core.withLock { c -> [CheckedContinuation<Void, Error>] in
                c.counters.failures += 1
                if ran { c.rebuildNeeded = "a batch's commit failed: \(error)" }
                defer { c.waiters.removeAll() }
                return ran ? c.waiters.map(\.continuation) : []
            }
            let failure = (error as? StoreError) ?? unavailable("database: \(error)")
            for w in failed { w.resume(throwing: failure) }
            log.warning("write batch failed", ["writes": "\(batch.count)", "error": "\(error)"])
            for w in batch { w.finish(failure) }
        }
    }

    /// Builds a new replica from the whole log and puts it in place of the old one.
    func rebuild(_ slot: PostgresWorkers.Slot) throws {
        let conn = try slot.connection()
        var fresh = SharedLogReplica(configuration: options.configuration)
        let delivered = core.withLock { $0.committed }
        var notes: [DeviceNotification] = []
        while true {
            let rows = try conn.query("SELECT seq, entry FROM zonertc_log WHERE seq > $1 ORDER BY seq LIMIT 1000",
                                      [.int8(Int64(clamping: fresh.appliedSequence))])
            for i in 0..<rows.count {
                let seq = UInt64(clamping: try rows.int8(i, 0))
                let owed = try fresh.apply(sequence: seq, payload: rows.rows[i][1] ?? [])
                // Entries after the last one known committed may be a failed batch that did commit.
                if seq > delivered { notes += owed }
            }
            if rows.count < 1000 { break }
        }
        core.withLock { c in
            c.replica = fresh
            c.committed = fresh.appliedSequence
            c.rebuildNeeded = nil
            c.counters.rebuilds += 1
        }
        push.submit(notes)
        log.notice("replica reloaded from the log", ["entries": "\(fresh.appliedSequence)"])
    }
}
#endif
