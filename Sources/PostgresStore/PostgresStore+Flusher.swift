#if PostgreSQL
import Foundation
import RecordStore
import ZoneCore

/// Entries up to `upTo` are committed; answer `writes` once they are durable.
struct FlushRequest: @unchecked Sendable {
    var upTo: UInt64
    /// The server the entries were committed on (`pg_postmaster_start_time()`): after a restart a
    /// flush proves nothing about them.
    var serverStart: [UInt8]?
    var writes: [PendingWrite]
    /// When the batch committed (monotonic nanoseconds), for `BatchTimings.flushQueueNanos`.
    var committedAt: UInt64 = Stopwatch.monotonicNanoseconds()
}

/// Acknowledgement after a synchronous flush. A batch commits with `synchronous_commit = off`,
/// so the log's lock is released once its commit record is written rather than flushed; its
/// writes are answered after a later synchronous commit returns. The WAL is flushed in order, so
/// a commit made after batch N's covers N. That commit is a flusher's update of its own
/// row of `zonertc_durable`, which PostgreSQL makes visible only once flushed: any session that
/// sees the row's `seq` ≥ N knows entry N survives a crash (the table's maximum is the durable
/// mark `readLog` returns). Daemons flush concurrently, and PostgreSQL writes their commits with
/// one flush (group commit), where holding the lock through the flush made them take turns.
///
/// Any daemon's flush covers every entry committed before it, whichever daemon wrote it, so a
/// batch's writes wait in `Core.unacknowledged` for the first mark that covers them: this
/// daemon's flush, or another's read with the log (`absorb`) or heard as `dN` (the listener).
/// Two daemons taking turns at the lock thus answer each other's batches, and a flusher that
/// finds its requests answered skips its commit.
extension PostgresStore {
    /// A flusher thread (`Options.flushers` of them share the queue): one synchronous commit of
    /// `row` for every request queued while it was busy, unless other marks answered them meanwhile.
    func flusherLoop(row: Int64) {
        let slot = PostgresWorkers.Slot(url: options.url, role: "zonertc-flush")
        defer { slot.discard() }
        while let requests = flushes.take(limit: .max, wait: 1) {
            guard let last = requests.max(by: { $0.upTo < $1.upTo }) else { continue }
            let taken = Stopwatch.monotonicNanoseconds()
            // Requests from before a restart cannot be proven durable by a flush after it.
            let (needed, stale) = core.withLock { c -> (Bool, [PendingWrite]) in
                for r in requests where !r.writes.isEmpty {
                    c.counters.timings.flushQueueNanos &+= taken &- r.committedAt
                }
                let stale = c.takeUnacknowledged { $0.upTo <= last.upTo && $0.serverStart != last.serverStart }
                return (last.upTo > c.durable || c.unacknowledged.contains { $0.upTo <= last.upTo }, stale)
            }
            if !stale.isEmpty { fail(stale, unavailable("the database restarted before the write was durable")) }
            guard needed else { continue }
            // The statement is idempotent and checks the server it runs on, so a connection found
            // broken (the server restarted since the last flush) is replaced and it runs once more.
            func mark() throws -> PostgresConnection.Rows {
                do { return try raiseDurableMark(last, row: row, slot.connection()) } catch let e as PostgresError
                    where e.kind == .connection {
                    slot.discard()
                    return try raiseDurableMark(last, row: row, slot.connection())
                }
            }
            do {
                let marked = try mark()
                guard marked.count == 1 else {
                    throw unavailable("the database restarted before the write was durable")
                }
                let flushed = Stopwatch.monotonicNanoseconds()
                let (notes, ready, covered) = core.withLock { c in
                    c.counters.flushes += 1
                    c.counters.timings.flushNanos &+= flushed &- taken
                    let covered = c.takeCovered(upTo: last.upTo, server: last.serverStart)
                    let (notes, ready) = c.markDurable(last.upTo)
                    return (notes, ready, covered)
                }
                for w in ready { w.resume() }
                if !notes.isEmpty { push.submit(notes) }
                for w in covered { w.finish(nil) }
            } catch {
                if let e = error as? PostgresError, e.kind == .connection { slot.discard() }
                log.warning("flush failed", ["upTo": "\(last.upTo)", "error": "\(error)"])
                let current = core.withLock { $0.takeUnacknowledged { $0.upTo <= last.upTo } }
                fail(current, (error as? StoreError) ?? unavailable("database: \(error)"))
            }
        }
    }

    /// Raises the durable mark in `row` to `request.upTo` with a synchronous commit, if the
    /// server is the one the entries were committed on; returns one row if it did. Then, in a
    /// transaction of its own committed without waiting for a flush, tells the other daemons
    /// (`dN`). Not in the synchronous one: a committing NOTIFY holds a lock that every notifying
    /// commit in the database takes (async.c's PreCommit_Notify orders the queue so), through
    /// the whole commit, so the WAL flush it waited for stalled every writer's COMMIT and
    /// serialized the daemons' flushes. One round trip still.
    private func raiseDurableMark(_ request: FlushRequest, row: Int64,
                                  _ conn: PostgresConnection) throws -> PostgresConnection.Rows {
        let upTo = PostgresConnection.Parameter.int8(Int64(clamping: request.upTo))
        let outcome = try conn.run([
            ("BEGIN", []),
            ("""
             WITH sync AS (SELECT set_config('synchronous_commit', 'on', true))
             INSERT INTO zonertc_durable (daemon, seq) SELECT $2, $1 FROM sync
             WHERE pg_postmaster_start_time()::text = $3
             ON CONFLICT (daemon) DO UPDATE SET seq = GREATEST(zonertc_durable.seq, EXCLUDED.seq)
             RETURNING seq
             """, [upTo, .int8(row), .text(String(decoding: request.serverStart ?? [], as: UTF8.self))]),
            ("COMMIT", []),
            ("BEGIN", []),
            ("SELECT set_config('synchronous_commit', 'off', true)", []),
            ("SELECT pg_notify($1, 'd' || $2::text) FROM zonertc_durable WHERE daemon = $3 AND seq >= $2",
             [.text(channel), upTo, .int8(row)]),
            ("COMMIT", []),
        ])
        guard let failure = outcome.failure else {
            guard outcome.results.count == 7 else {
                throw PostgresError(kind: .statement, message: "the durable mark's update gave no result")
            }
            return outcome.results[1]
        }
        // A lost connection: whether the COMMIT was answered or not, `mark()` runs it all again.
        guard failure.kind == .statement else { throw failure }
        // The pipeline stopped inside an explicit transaction: end it, so the session is usable.
        // If even that fails the session is closed, and the slot opens a new one for the next flush.
        do { try conn.execute("ROLLBACK") } catch { conn.close() }
        // BEGIN, the mark's row and COMMIT all answered: the mark is durable, whatever the NOTIFY
        // after it did (e.g. "too many notifications in the NOTIFY queue"). Failing the writes
        // would answer saved writes with TRY_AGAIN_LATER, and a retry under
        // ifServerRecordUnchanged would then conflict with itself. The other daemons still learn
        // the mark: a later `dN` covers every entry below it (`takeIn` raises to the highest
        // heard), and every read of the log, the listener's at least every `pollInterval`,
        // takes `max(seq)` of `zonertc_durable` with it (`LogPage.durableMark`, `absorb`).
        guard outcome.results.count >= 3, outcome.results[1].count == 1 else { throw failure }
        core.withLock { $0.counters.notifyFailures += 1 }
        log.warning("the durable mark committed but its NOTIFY failed; other daemons learn it from the log",
                    ["upTo": "\(request.upTo)", "error": "\(failure)"])
        return outcome.results[1]
    }

    /// Whether `writes`' entries survive is unknown: they get TRY_AGAIN_LATER (a retry
    /// under `ifServerRecordUnchanged` then sees CONFLICT if it did), and the replica, which may
    /// hold what the database lost, is rebuilt.
    private func fail(_ writes: [PendingWrite], _ failure: StoreError) {
        let waiting = core.withLock { c in
            c.counters.failures += 1
            return c.abandonUndurable("a flush failed: \(failure.message)")
        }
        for w in waiting { w.resume(throwing: failure) }
        for w in writes { w.finish(failure) }
    }
}
#endif
