#if PostgreSQL
import Foundation
import RecordStore
import ZoneCore

/// Compaction of the shared log, which otherwise grows with every batch and is replayed whole by
/// every daemon that starts. A daemon stores its replica's state after entry S as a snapshot
/// (`zonertc_snapshot`, the journal's snapshot encoding) and deletes the entries up to S that
/// were committed longer ago than the change-token retention: every live daemon replayed those
/// long ago (its listener reads the log at least every `pollInterval`), and no unexpired change
/// token needs the tombstones the snapshot leaves out. A daemon that starts, or finds a gap where
/// deleted entries were, starts its replica from the newest snapshot and replays what follows.
extension PostgresStore {
    /// Compacts now, with entries older than `age` eligible (the automatic compaction uses the
    /// token retention); returns how many entries were deleted.
    public func compact(olderThan age: Duration) async throws -> Int {
        try await onReader(idempotent: false) { [self] conn in try compact(conn, olderThan: age) }
    }

    func compact(_ conn: PostgresConnection, olderThan age: Duration) throws -> Int {
        try catchUp(conn, deliver: true)
        let retentionMs = options.configuration.tokenRetention.nanoseconds / 1_000_000
        // The state must be durable (a crash cannot take what the snapshot holds) and no batch of
        // this daemon may be half-applied in it.
        let taken = core.withLock { c -> (sequence: UInt64, state: [UInt8])? in
            let at = c.replica.appliedSequence
            guard c.rebuildNeeded == nil, at > 0, at <= c.durable, at <= c.committed else { return nil }
            let prune = clock.now().millisecondsSinceEpoch &- retentionMs
            return (at, c.replica.snapshot(pruneTombstonesBeforeMs: prune))
        }
        guard let taken else { return 0 }
        let ageMs = age.nanoseconds / 1_000_000
        let at = Int64(clamping: taken.sequence)
        do {
            let results = try conn.pipeline([
                ("BEGIN", []),
                ("INSERT INTO zonertc_snapshot (seq, state) VALUES ($1, $2) ON CONFLICT (seq) DO NOTHING",
                 [.int8(at), .bytea(taken.state)]),
                // A prefix of the log: entries up to the newest one old enough, and not past the snapshot.
                ("""
                 WITH gone AS (DELETE FROM zonertc_log WHERE seq <= LEAST($1, (
                     SELECT COALESCE(max(seq), 0) FROM zonertc_log
                     WHERE committed_at < now() - $2 * interval '1 millisecond')) RETURNING 1)
                 SELECT count(*)::bigint FROM gone
                 """, [.int8(at), .int8(max(0, ageMs))]),
                // The newest snapshot covers every deleted entry; older ones are not needed.
                ("DELETE FROM zonertc_snapshot WHERE seq < (SELECT max(seq) FROM zonertc_snapshot)", []),
                ("COMMIT", []),
            ])
            let deleted = results.count == 5 ? Int(try results[2].int8(0, 0)) : 0
            if deleted > 0 {
                log.notice("log compacted", ["snapshotAfter": "\(taken.sequence)", "entriesDeleted": "\(deleted)"])
            }
            return deleted
        } catch {
            _ = try? conn.execute("ROLLBACK")
            throw error
        }
    }

    /// Starts `replica` from the newest snapshot, if the log was ever compacted.
    static func loadSnapshot(_ conn: PostgresConnection, into replica: inout SharedLogReplica) throws {
        let rows = try conn.query("SELECT seq, state FROM zonertc_snapshot ORDER BY seq DESC LIMIT 1")
        guard rows.count == 1 else { return }
        let seq = try rows.int8(0, 0)
        guard seq > 0 else {
            throw PostgresError(kind: .statement, message: "a snapshot numbered \(seq) in zonertc_snapshot")
        }
        try replica.load(snapshot: rows.rows[0][1] ?? [], sequence: UInt64(seq))
    }
}
#endif
