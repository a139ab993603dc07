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
}

/// Acknowledgement after a synchronous flush. A batch commits with `synchronous_commit = off`,
/// so the log's lock is released once its commit record is written rather than flushed; its
/// writes are answered after a later synchronous commit returns. The WAL is flushed in order, so
/// a commit made after batch N's covers N. That commit is the flusher's update of this daemon's
/// row of `zonertc_durable`, which PostgreSQL makes visible only once flushed: any session that
/// sees the row's `seq` ≥ N knows entry N survives a crash (the table's maximum is the durable
/// mark `readLog` returns). Daemons flush concurrently, and PostgreSQL writes their commits with
/// one flush (group commit), where holding the lock through the flush made them take turns.
extension PostgresStore {
    /// The flusher thread: one synchronous commit for every request queued while the last ran.
    func flusherLoop() {
        let slot = PostgresWorkers.Slot(url: options.url, role: "zonertc-flush")
        defer { slot.discard() }
        while let requests = flushes.take(limit: .max, wait: 1) {
            guard let last = requests.max(by: { $0.upTo < $1.upTo }) else { continue }
            // Requests from before a restart cannot be proven durable by a flush after it.
            let current = requests.filter { $0.serverStart == last.serverStart }
            let stale = requests.filter { $0.serverStart != last.serverStart }
            if !stale.isEmpty { fail(stale, unavailable("the database restarted before the write was durable")) }
            // The statement is idempotent and checks the server it runs on, so a connection found
            // broken (the server restarted since the last flush) is replaced and it runs once more.
            func mark() throws -> PostgresConnection.Rows {
                do { return try raiseDurableMark(last, slot.connection()) } catch let e as PostgresError
                    where e.kind == .connection {
                    slot.discard()
                    return try raiseDurableMark(last, slot.connection())
                }
            }
            do {
                let marked = try mark()
                guard marked.count == 1 else {
                    throw unavailable("the database restarted before the write was durable")
                }
                let (notes, ready) = core.withLock { c in
                    c.counters.flushes += 1
                    return c.markDurable(last.upTo)
                }
                for w in ready { w.resume() }
                if !notes.isEmpty { push.submit(notes) }
                for r in current { for w in r.writes { w.finish(nil) } }
            } catch {
                if let e = error as? PostgresError, e.kind == .connection { slot.discard() }
                log.warning("flush failed", ["upTo": "\(last.upTo)", "error": "\(error)"])
                fail(current, (error as? StoreError) ?? unavailable("database: \(error)"))
            }
        }
    }

    /// Raises this daemon's durable mark to `request.upTo` with a synchronous commit, if the
    /// server is the one the entries were committed on; returns one row if it did.
    private func raiseDurableMark(_ request: FlushRequest,
                                  _ conn: PostgresConnection) throws -> PostgresConnection.Rows {
        try conn.query("""
            WITH sync AS (SELECT set_config('synchronous_commit', 'on', true)),
                 mark AS (INSERT INTO zonertc_durable (daemon, seq) SELECT $2, $1 FROM sync
                          WHERE pg_postmaster_start_time()::text = $4
                          ON CONFLICT (daemon) DO UPDATE SET seq = GREATEST(zonertc_durable.seq, EXCLUDED.seq)
                          RETURNING seq)
            SELECT pg_notify($3, 'd' || $1::text) FROM mark
            """, [.int8(Int64(clamping: request.upTo)), .int8(daemonID), .text(channel),
                          .text(String(decoding: request.serverStart ?? [], as: UTF8.self))])
    }

    /// Whether `requests`' entries survive is unknown: their writes get TRY_AGAIN_LATER (a retry
    /// under `ifServerRecordUnchanged` then sees CONFLICT if it did), and the replica, which may
    /// hold what the database lost, is rebuilt.
    private func fail(_ requests: [FlushRequest], _ failure: StoreError) {
        let waiting = core.withLock { c in
            c.counters.failures += 1
            return c.abandonUndurable("a flush failed: \(failure.message)")
        }
        for w in waiting { w.resume(throwing: failure) }
        for r in requests { for w in r.writes { w.finish(failure) } }
    }
}
#endif
