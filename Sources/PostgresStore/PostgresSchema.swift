#if PostgreSQL

/// The database's tables, created and migrated on start. Each migration runs once, in order, in
/// the transaction that records it in `zonertc_migrations`; an advisory lock keeps two daemons
/// starting at once from both migrating.
///
/// The store's state is the shared log `zonertc_log`: one row per committed batch of writes (the
/// journal's mutations plus the notifications they owe devices), numbered without gaps by the
/// single row of `zonertc_head`, which every writer locks (`SELECT … FOR UPDATE`) for the length
/// of its transaction; `zonertc_durable` says how far the log is flushed to disk. Zones, records
/// with their change tags, tombstones, change feeds, shares and participants, subscriptions and
/// devices are what replaying the log gives (`SharedLogReplica`); users and their tokens have a
/// table of their own.
enum PostgresSchema {
    struct Migration {
        var version: Int
        var description: String
        var sql: String
    }

    static let migrations: [Migration] = [
        Migration(version: 1, description: "shared log, head, users", sql: """
            CREATE TABLE zonertc_log (
                seq bigint PRIMARY KEY CHECK (seq > 0),
                entry bytea NOT NULL,
                committed_at timestamptz NOT NULL DEFAULT now());
            CREATE TABLE zonertc_head (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                seq bigint NOT NULL);
            INSERT INTO zonertc_head (seq) VALUES (0);
            CREATE TABLE zonertc_users (
                name text PRIMARY KEY,
                token text NOT NULL UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now());
            """),
        // Batches commit without waiting for the WAL flush; each daemon's flusher records here,
        // with a synchronous commit, how far the log is durable (PostgresStore+Flusher.swift).
        // Entries written before this migration were committed synchronously: durable.
        Migration(version: 2, description: "durable mark per daemon", sql: """
            CREATE TABLE zonertc_durable (
                daemon bigint PRIMARY KEY,
                seq bigint NOT NULL);
            INSERT INTO zonertc_durable (daemon, seq) SELECT 0, seq FROM zonertc_head;
            """),
        // Compaction: the state after entry `seq`, so the entries up to it can be deleted
        // (PostgresStore+Compaction.swift).
        Migration(version: 3, description: "snapshots for compacting the log", sql: """
            CREATE TABLE zonertc_snapshot (
                seq bigint PRIMARY KEY CHECK (seq > 0),
                state bytea NOT NULL,
                taken_at timestamptz NOT NULL DEFAULT now());
            """),
        // A write batch's steps as functions, one statement each, so a batch holds the head's
        // lock for fewer statements (planned once per session, not once per batch); the tables
        // are unchanged, so daemons of the previous version keep working beside them
        // (PostgresStore+Writer.swift). Each statement of a volatile function takes a snapshot of
        // its own: the log is read after the lock is granted, as the separate statements did.
        Migration(version: 4, description: "write batch functions", sql: """
            CREATE FUNCTION zonertc_lock_head(after_seq bigint, page_limit bigint)
            RETURNS TABLE (entry_seq bigint, entry_data bytea, durable_mark bigint, server_start text,
                           head_seq bigint)
            LANGUAGE plpgsql AS $fn$
            DECLARE
                locked bigint;
            BEGIN
                PERFORM set_config('synchronous_commit', 'off', true);
                SELECT h.seq INTO locked FROM zonertc_head h FOR UPDATE;
                RETURN QUERY
                    SELECT l.seq, l.entry, d.mark, pg_postmaster_start_time()::text, locked
                    FROM (SELECT COALESCE(max(x.seq), 0) AS mark FROM zonertc_durable x) d
                    LEFT JOIN LATERAL (SELECT g.seq, g.entry FROM zonertc_log g WHERE g.seq > after_seq
                                       ORDER BY g.seq LIMIT page_limit) l ON true
                    ORDER BY l.seq;
            END
            $fn$;
            CREATE FUNCTION zonertc_append(new_seq bigint, new_entry bytea, channel text) RETURNS void
            LANGUAGE plpgsql AS $fn$
            BEGIN
                INSERT INTO zonertc_log (seq, entry) VALUES (new_seq, new_entry);
                UPDATE zonertc_head SET seq = new_seq;
                PERFORM pg_notify(channel, new_seq::text);
            END
            $fn$;
            """),
        // Records with reference actions, locations, assets, parents, shares and devices in their
        // stamps: log entries of version 2 and snapshots of version 2 (`SharedLogEntryCodec`,
        // `SnapshotCodec`); the rows written before stay as they are and are still read. The
        // tables are unchanged: the version is what keeps a daemon of an earlier build, which
        // cannot read those entries, from starting on this database ("upgrade zonertc").
        Migration(version: 5, description: "record format 2 in log entries and snapshots", sql: """
            COMMENT ON COLUMN zonertc_log.entry IS
                'SharedLogEntryCodec: version 1 (record format 1) or 2 (record formats 1 and 2)';
            COMMENT ON COLUMN zonertc_snapshot.state IS 'SnapshotCodec: ZRSNAP1 or ZRSNAP2';
            """),
        // Shares with a short GUID (`records/resolve`, `records/accept`): log entries of version 3.
        // As with 5, only the version changes, so that an earlier build refuses to start here.
        Migration(version: 6, description: "share short GUIDs in log entries and snapshots", sql: """
            COMMENT ON COLUMN zonertc_log.entry IS
                'SharedLogEntryCodec: version 1 (record format 1), 2 (record formats 1 and 2) or 3 (share GUIDs)';
            """),
        // The container's API tokens (`store serve --api-token`), remembered for every daemon on
        // the database and across restarts (PostgresUserDirectory+APITokens.swift). `IF NOT EXISTS`:
        // a database taken back to an earlier version by hand keeps its tokens when migrated again.
        Migration(version: 7, description: "API tokens", sql: """
            CREATE TABLE IF NOT EXISTS zonertc_api_tokens (
                token text PRIMARY KEY,
                declared_at timestamptz NOT NULL DEFAULT now());
            """),
        // Uploaded asset files (assets/upload), readable by every daemon on the database
        // (PostgresAssets.swift). A table of its own: nothing in the log changes, so an earlier
        // build could still read the log, but it would not serve the files; hence a migration.
        Migration(version: 8, description: "asset files", sql: """
            CREATE TABLE IF NOT EXISTS zonertc_assets (
                receipt text PRIMARY KEY,
                file_checksum text NOT NULL,
                size bigint NOT NULL,
                owner text NOT NULL,
                bytes bytea NOT NULL,
                kept_at timestamptz NOT NULL DEFAULT now());
            """),
        // Web push tokens (tokens/create, tokens/register) kept in the log, so that every daemon on
        // the database knows them: journal tags 14 and 15 in log entries of version 4, snapshots
        // ZRSNAP3. As with 5 and 6, only the version changes, so that an earlier build, which
        // cannot read them, refuses to start here ("upgrade zonertc").
        Migration(version: 9, description: "web push tokens in log entries and snapshots", sql: """
            COMMENT ON COLUMN zonertc_log.entry IS
                'SharedLogEntryCodec: version 1 to 3 (record formats, share GUIDs) or 4 (web push tokens)';
            COMMENT ON COLUMN zonertc_snapshot.state IS 'SnapshotCodec: ZRSNAP1, ZRSNAP2 or ZRSNAP3 (web push tokens)';
            """),
        // Deletions that keep the record shares' roots whose hierarchy held the record, so a
        // record-share participant hears only of deletions in hierarchies shared with them: journal
        // tag 16 in log entries of version 5, snapshots ZRSNAP4. Only the version changes, as with 9.
        Migration(version: 10, description: "shared roots of deleted records in log entries and snapshots", sql: """
            COMMENT ON COLUMN zonertc_log.entry IS
                'SharedLogEntryCodec: version 1 to 4 or 5 (deletions with their shared roots)';
            COMMENT ON COLUMN zonertc_snapshot.state IS
                'SnapshotCodec: ZRSNAP1 to ZRSNAP3 or ZRSNAP4 (deletions with their shared roots)';
            """),
        // The key asset upload URLs are signed with (PostgresAssets.signingKey), so that a URL one
        // daemon handed out is good on every daemon on the database and across restarts. An earlier
        // build would hand out URLs only it accepts, hence a migration: it refuses to start here.
        Migration(version: 11, description: "asset URL signing key", sql: """
            CREATE TABLE IF NOT EXISTS zonertc_asset_signing_key (
                id integer PRIMARY KEY CHECK (id = 1),
                key bytea NOT NULL);
            """),
        // Records with a short GUID of their own (records/modify `createShortGUID`): record format 3 in
        // log entries of version 6, snapshots ZRSNAP5. Only the version changes, as with 9 and 10.
        Migration(version: 12, description: "short GUIDs of records in log entries and snapshots", sql: """
            COMMENT ON COLUMN zonertc_log.entry IS
                'SharedLogEntryCodec: version 1 to 5 or 6 (records with short GUIDs)';
            COMMENT ON COLUMN zonertc_snapshot.state IS
                'SnapshotCodec: ZRSNAP1 to ZRSNAP4 or ZRSNAP5 (records with short GUIDs)';
            """),
        // Zone-wide shares with their title, thumbnail and type (`ZoneShare.fields`): journal tag 17 in
        // log entries of version 7, snapshots ZRSNAP6. Only the version changes, as with 12.
        Migration(version: 13, description: "zone-wide share fields in log entries and snapshots", sql: """
            COMMENT ON COLUMN zonertc_log.entry IS
                'SharedLogEntryCodec: version 1 to 6 or 7 (zone-wide shares with fields)';
            COMMENT ON COLUMN zonertc_snapshot.state IS
                'SnapshotCodec: ZRSNAP1 to ZRSNAP5 or ZRSNAP6 (zone-wide shares with fields)';
            """),
    ]

    /// An arbitrary constant naming the advisory lock held while migrating.
    static let migrationLock: Int64 = 0x7a6f6e65_72746301

    /// Refuses, with what to do, a database whose schema is not the one this build writes: a
    /// read-only open (`store inspect`) migrates nothing, so it must not read tables that a
    /// daemon of this build has not created yet.
    static func requireCurrent(_ c: PostgresConnection) throws(PostgresError) {
        let latest = migrations.last?.version ?? 0
        let exists = try c.execute("SELECT to_regclass('zonertc_migrations') IS NOT NULL").text(0, 0) == "t"
        let current = exists
            ? Int(try c.query("SELECT COALESCE(max(version), 0)::bigint FROM zonertc_migrations").int8(0, 0)) : 0
        guard current != latest else { return }
        let what = current == 0 ? "has no ZoneRTC schema" : "has the ZoneRTC schema at version \(current)"
        throw PostgresError(kind: .statement, message: current > latest
            ? "the database \(what); this build knows up to \(latest): upgrade zonertc"
            : "the database \(what); this build reads version \(latest): start `zonertc store serve --postgres URL` "
              + "(or `zonertc store user add`) once, which creates or migrates it")
    }

    /// Brings the schema up to date; returns the version it is at. Refuses a database whose
    /// schema is newer than this build knows.
    @discardableResult
    static func migrate(_ c: PostgresConnection) throws(PostgresError) -> Int {
        try c.execute("BEGIN")
        do throws(PostgresError) {
            try c.query("SELECT pg_advisory_xact_lock($1)", [.int8(migrationLock)])
            try c.execute("""
                CREATE TABLE IF NOT EXISTS zonertc_migrations (
                    version integer PRIMARY KEY,
                    description text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let rows = try c.query("SELECT COALESCE(max(version), 0)::bigint FROM zonertc_migrations")
            let current = Int(try rows.int8(0, 0))
            let latest = migrations.last?.version ?? 0
            guard current <= latest else {
                throw PostgresError(kind: .statement, message:
                    "the database's schema is at version \(current); this build knows up to \(latest): upgrade zonertc")
            }
            for m in migrations where m.version > current {
                try c.execute(m.sql)
                try c.query("INSERT INTO zonertc_migrations (version, description) VALUES ($1::bigint::integer, $2)",
                            [.int8(Int64(m.version)), .text(m.description)])
            }
            try c.execute("COMMIT")
            return latest
        } catch {
            _ = try? c.execute("ROLLBACK")
            throw error
        }
    }
}
#endif
