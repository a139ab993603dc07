#if PostgreSQL
import Foundation
import RecordStore
import ZoneCore

/// A write request waiting for the writer thread: run at the log's head, answered once durable.
final class PendingWrite: @unchecked Sendable {
    let execute: (inout SharedLogReplica) -> Void
    /// nil: committed, answer with the outcome; else the error to answer with.
    let finish: (StoreError?) -> Void
    /// Who sent it, for group commit's guess at who writes next (`ReturningWriters`).
    let writer: WriterKey?

    init(writer: WriterKey? = nil, execute: @escaping (inout SharedLogReplica) -> Void,
         finish: @escaping (StoreError?) -> Void) {
        self.writer = writer
        self.execute = execute
        self.finish = finish
    }
}

extension PostgresStore {
    /// The writer thread: one transaction per batch of queued writes, holding the log's lock; the
    /// flusher answers them.
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
            var timings = BatchTimings()
            let all = holdOpen(batch, &timings)
            commit(all, slot, timings)
        }
    }

    /// Group commit (`GroupCommit`): a small batch waits, before it takes the log's lock, for the
    /// writes this daemon expects soon, so one transaction and one flush serve them all: one from
    /// each writer whose write is committed and not yet answered, and one from each writer answered
    /// within the delay that has not written since.
    private func holdOpen(_ taken: [PendingWrite], _ timings: inout BatchTimings) -> [PendingWrite] {
        let policy = options.groupCommit
        guard policy.delay > .zero, taken.count < policy.size else { return taken }
        let window = UInt64(clamping: policy.delay.nanoseconds)
        let start = Stopwatch.monotonicNanoseconds()
        let expected = core.withLock { c in
            for w in taken { c.returning.arrived(w.writer) }
            let inFlight = c.unacknowledged.reduce(0) { $0 &+ $1.writes.count }
            return inFlight &+ c.returning.expected(at: start, window: window)
        }
        let target = policy.target(batch: taken.count, expected: expected, limit: options.maxBatch)
        guard target > taken.count else { return taken }
        var batch = taken
        timings.writesGathered = writes.gather(into: &batch, target: target, limit: options.maxBatch,
                                               deadline: Date(timeIntervalSinceNow: Double(window) / 1e9))
        timings.batchesHeldOpen = 1
        timings.gatherNanos = Stopwatch.monotonicNanoseconds() &- start
        return batch
    }

    /// Runs `batch` at the log's head and appends its entry, in one transaction, then hands the
    /// writes to the flusher.
    private func commit(_ first: [PendingWrite], _ slot: PostgresWorkers.Slot, _ held: BatchTimings) {
        var batch = first
        var ran = false
        do {
            let conn = try slot.connection()
            // Holding the head row until COMMIT orders this batch after every other writer's. The
            // commit does not wait for its WAL flush, so the lock is held for no flush (milliseconds
            // on this disk); the flusher makes the entry durable before anyone is answered, and
            // several daemons' flushes then group into one. One round trip, one statement
            // (`zonertc_lock_head`, migration 4): the lock, then (a snapshot taken after it was
            // granted) the entries other daemons appended since this replica's last.
            let from = core.withLock { $0.replica.appliedSequence }
            var lapStart = Stopwatch.monotonicNanoseconds()
            var timings = held
            func lap() -> UInt64 {
                let now = Stopwatch.monotonicNanoseconds()
                defer { lapStart = now }
                return now &- lapStart
            }
            let lockAndRead = LogPage.parameters(after: from) + [.int8(Int64(LogPage.limit))]
            let results = try conn.pipeline([
                ("BEGIN", []),
                ("SELECT * FROM zonertc_lock_head($1, $2)", lockAndRead),
            ])
            guard results.count == 2, results[1].count >= 1, results[1].rows[0].count == 5 else {
                throw PostgresError(kind: .statement, message: "the log's head row is missing")
            }
            timings.lockNanos = lap()
            let head = UInt64(exactly: try results[1].int8(0, 4))
            let page = try LogPage(results[1])
            _ = absorb(page, deliver: true)
            if page.entries.count == LogPage.limit { try catchUp(conn, deliver: true) }
            timings.entriesCaughtUp = page.entries.count
            timings.catchUpNanos = lap()
            if let why = core.withLock({ $0.rebuildNeeded }) {
                throw unavailable("the store is reloading its log (\(why))")
            }
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
                for w in batch {
                    c.returning.arrived(w.writer)
                    w.execute(&c.replica)
                }
                return c.replica.sealBatch()
            }
            timings.executeNanos = lap()
            if let sealed {
                // The entry, the head and the NOTIFY commit together, or not at all; the COMMIT
                // goes in the same round trip.
                try conn.pipeline([
                    ("SELECT zonertc_append($1, $2, $3)",
                     [.int8(Int64(clamping: sealed.sequence)), .bytea(sealed.payload), .text(channel)]),
                    ("COMMIT", []),
                ])
            } else {
                try conn.execute("COMMIT")
            }
            timings.appendNanos = lap()
            // Every write is answered once what it ran on is durable, a failed one too: its
            // answer (a conflict, say) may rest on another daemon's entry not yet flushed.
            let request = core.withLock { c -> FlushRequest? in
                if let sealed {
                    c.committed = max(c.committed, sealed.sequence)
                    if !sealed.notifications.isEmpty { c.pendingNotes.append((sealed.sequence, sealed.notifications)) }
                }
                c.counters.batches += 1
                c.counters.writes += batch.count
                c.counters.timings.add(timings)
                let upTo = c.replica.appliedSequence
                guard upTo > c.durable else { return nil }
                let request = FlushRequest(upTo: upTo, serverStart: c.serverStart, writes: batch, committedAt: lapStart)
                // Whichever durable mark covers it first answers it: this daemon's flush, or
                // another daemon's read from the log or heard as `dN` (PostgresStore+Flusher.swift).
                c.unacknowledged.append(request)
                return request
            }
            guard let request else {
                core.withLock { $0.returning.answered(batch.lazy.map(\.writer), at: Stopwatch.monotonicNanoseconds()) }
                for w in batch { w.finish(nil) }
                return
            }
            if !flushes.enqueue(request) {
                let closing = core.withLock { $0.takeUnacknowledged { $0.upTo <= request.upTo } }
                for w in closing { w.finish(unavailable("the store is closing")) }
            }
        } catch {
            // The outcome is unknown to us (a lost COMMIT may have committed): say so, and if the
            // replica ran the batch, rebuild it from the log, which knows.
            if let e = error as? PostgresError, e.kind == .connection { slot.discard() } else {
                _ = try? slot.connection().execute("ROLLBACK")
            }
            let failed = core.withLock { c -> [CheckedContinuation<Void, Error>] in
                c.counters.failures += 1
                return ran ? c.abandonUndurable("a batch's commit failed: \(error)") : []
            }
            let failure = (error as? StoreError) ?? unavailable("database: \(error)")
            for w in failed { w.resume(throwing: failure) }
            log.warning("write batch failed", ["writes": "\(batch.count)", "error": "\(error)"])
            for w in batch { w.finish(failure) }
        }
    }

    /// Builds a new replica from the whole log and puts it in place of the old one. Entries
    /// after the old durable mark may be a failed batch that did commit, or entries the replica
    /// held before a restart: their notifications are owed again (once durable).
    func rebuild(_ slot: PostgresWorkers.Slot) throws {
        let conn = try slot.connection()
        var fresh = SharedLogReplica(configuration: options.configuration)
        try Self.loadSnapshot(conn, into: &fresh)
        let delivered = core.withLock { $0.durable }
        var owed: [(sequence: UInt64, notes: [DeviceNotification])] = []
        var page: LogPage
        repeat {
            page = try readLog(conn, after: fresh.appliedSequence)
            for (seq, payload) in page.entries {
                let notes = try fresh.apply(sequence: seq, payload: payload)
                if seq > delivered && !notes.isEmpty { owed.append((seq, notes)) }
            }
        } while page.entries.count == LogPage.limit
        let (notes, ready) = core.withLock { c in
            c.replica = fresh
            c.committed = fresh.appliedSequence
            c.serverStart = page.serverStart
            c.rebuildNeeded = nil
            c.pendingNotes = owed
            c.counters.rebuilds += 1
            return c.markDurable(page.durableMark)
        }
        for w in ready { w.resume() }
        push.submit(notes)
        log.notice("replica reloaded from the log", ["entries": "\(fresh.appliedSequence)"])
    }
}
#endif
