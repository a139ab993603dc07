#if PostgreSQL
import Foundation
import RecordStore
import Synchronization
import ZoneCore

/// The record store on PostgreSQL: any number of processes (daemons) serve one set of zones.
///
/// Each process keeps a `SharedLogReplica` in step with the database's log. Writes queue for
/// one writer thread, which takes the log's lock, catches up, runs every queued write at the
/// head and appends their effects as one entry in the same transaction, with a NOTIFY; it
/// commits without waiting for the WAL flush, and a flusher thread answers the requests once a
/// synchronous commit has made the entry durable (`PostgresStore+Flusher.swift`). Reads run on
/// a few worker threads, each first reading the entries it has not applied (so a read on one
/// daemon sees every write any daemon has acknowledged), and wait, as on the embedded store,
/// until what they saw is durable. A listener thread LISTENs for new entries and delivers their
/// notifications, once durable, to this process's push streams; when its connection drops it
/// reconnects and reads what it missed.
public final class PostgresStore: StoreBackend, @unchecked Sendable {
    public struct Options: Sendable {
        /// A libpq connection URI or key=value string, e.g. `postgresql:///zonertc?host=/tmp/pgsock`.
        public var url: String
        public var configuration: StoreConfiguration = .default
        public var pushProfile: PushProfile = .lan
        public var pushSeed: UInt64 = 1
        /// Deliver pushes on a thread that follows the wall clock; off for manual clocks.
        public var automaticPush = true
        /// Connections (and threads) serving reads.
        public var readers = 4
        /// Threads (and connections) making the synchronous commits that answer writes: while
        /// one waits for its WAL flush the next batch's flush starts, and PostgreSQL writes
        /// concurrent commits with one flush, so a batch does not wait for the one before it.
        public var flushers = 2
        /// Writes committed together at most.
        public var maxBatch = 512
        /// How long a small batch waits for writes expected soon before it commits
        /// (`GroupCommit`); `.off` commits each batch as soon as the writer takes it.
        public var groupCommit = GroupCommit()
        /// How often the listener reads the log even without a notification, so a lost one
        /// delays a push by at most this long.
        public var pollInterval: Duration = .milliseconds(500)
        /// How often the listener compacts the log (entries older than the token retention);
        /// nil: never (`compact(olderThan:)` still does).
        public var compactionInterval: Duration? = .seconds(3600)
        /// Open only to read (`zonertc store inspect`): no writer, no listener.
        public var readOnly = false

        public init(url: String) { self.url = url }
    }

    /// Counters for operators and tests.
    public struct Counters: Sendable {
        public var batches = 0
        public var writes = 0
        /// Synchronous commits that made entries durable (each may cover several batches).
        public var flushes = 0
        public var entriesApplied = 0
        public var rebuilds = 0
        public var listenConnects = 0
        public var notificationsHeard = 0
        public var failures = 0
        /// Writes answered under a durable mark read from the log or heard as `dN` (mostly another
        /// daemon's flush) before this daemon's own flush returned: flushes shared across daemons.
        public var sharedAcknowledgements = 0
        /// Durable marks committed whose `dN` NOTIFY the server refused (e.g. its queue was full):
        /// their writes were answered all the same; other daemons read the mark from the log.
        public var notifyFailures = 0
        /// Where write batches' time went (nanoseconds, summed over batches), for profiling.
        public var timings = BatchTimings()
    }

    /// A write batch's steps on the writer and flusher threads, summed.
    public struct BatchTimings: Sendable {
        /// Holding small batches open for writes expected soon (`GroupCommit`), before the lock.
        public var gatherNanos: UInt64 = 0
        /// Batches that were held open, and the writes that joined them while they were.
        public var batchesHeldOpen = 0
        public var writesGathered = 0
        /// BEGIN, the head row's lock and the read of other daemons' entries: one round trip
        /// plus the wait for the lock.
        public var lockNanos: UInt64 = 0
        /// Decoding and applying other daemons' entries read under the lock.
        public var catchUpNanos: UInt64 = 0
        public var entriesCaughtUp = 0
        /// Running the batch's writes on the replica and encoding its entry.
        public var executeNanos: UInt64 = 0
        /// The entry, head, NOTIFY and COMMIT: the second round trip under the lock.
        public var appendNanos: UInt64 = 0
        /// From a batch's commit until its flush request is taken by the flusher.
        public var flushQueueNanos: UInt64 = 0
        /// The flusher's synchronous commit (round trip and WAL flush).
        public var flushNanos: UInt64 = 0

        /// One batch's writer steps added in (the flusher adds its own).
        mutating func add(_ batch: BatchTimings) {
            gatherNanos &+= batch.gatherNanos
            batchesHeldOpen &+= batch.batchesHeldOpen
            writesGathered &+= batch.writesGathered
            lockNanos &+= batch.lockNanos
            catchUpNanos &+= batch.catchUpNanos
            entriesCaughtUp &+= batch.entriesCaughtUp
            executeNanos &+= batch.executeNanos
            appendNanos &+= batch.appendNanos
        }
    }

    struct Core {
        var replica: SharedLogReplica
        /// The last entry known to be committed (visible) in the database.
        var committed: UInt64 = 0
        /// The last entry known to be durable: its commit record is flushed, so it survives a
        /// crash of the server. Batches commit without waiting for the flush (see
        /// `PostgresStore+Flusher.swift`); entries up to here may be answered, read and pushed.
        var durable: UInt64 = 0
        /// Notifications of applied entries that are not yet durable, in log order.
        var pendingNotes: [(sequence: UInt64, notes: [DeviceNotification])] = []
        /// `pg_postmaster_start_time()` as last seen: a change means the server restarted, and
        /// entries applied here but not durable may have been lost with it.
        var serverStart: [UInt8]?
        /// Set when the replica may hold effects the database does not (a batch whose commit
        /// failed) or cannot follow the log: it is rebuilt from the log before serving again.
        var rebuildNeeded: String?
        /// Committed writes waiting for a durable mark that covers them, in commit order.
        var unacknowledged: [FlushRequest] = []
        /// Reads that saw entries not yet durable, waiting for them.
        var waiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Error>)] = []
        var counters = Counters()
        /// Writers answered a moment ago, expected to write again (group commit).
        var returning = ReturningWriters()
    }

    public let options: Options
    public let clock: any InstantSource
    public let push: PushHub
    /// The NOTIFY channel: one per schema, so stores in several schemas of a database stay apart.
    public let channel: String
    let core: Mutex<Core>
    let writes = BatchQueue<PendingWrite>()
    let flushes = BatchQueue<FlushRequest>()
    /// This process's rows in `zonertc_durable`, one per flusher thread (a row is locked until
    /// its synchronous commit ends, so flushers sharing one would take turns).
    let flusherIDs: [Int64]
    let readers: PostgresWorkers
    let stopping = Atomic<Bool>(false)
    let log = Logger(component: "store-postgres")

    /// Connects, migrates the schema, reads the log and starts the writer and listener threads.
    public static func open(options: Options, clock: any InstantSource = WallClock()) async throws -> PostgresStore {
        try await onOwnThread("zonertc-pg-open") { try PostgresStore(options: options, clock: clock) }
    }

    private init(options: Options, clock: any InstantSource) throws {
        self.options = options
        self.clock = clock
        flusherIDs = (0..<max(1, options.flushers)).map { _ in Int64.random(in: 1...Int64.max) }
        let c = try PostgresConnection(url: options.url)
        if !options.readOnly {
            try PostgresSchema.migrate(c)
            // Every start adds a daemon's rows: keep only the highest (a live daemon's come back
            // with its next flush), so the mark stays a scan of a few rows.
            try c.execute("DELETE FROM zonertc_durable WHERE seq < (SELECT max(seq) FROM zonertc_durable)")
        } else {
            try PostgresSchema.requireCurrent(c)
        }
        let schema = try c.execute("SELECT current_schema()").text(0, 0) ?? "public"
        channel = String(decoding: Array("zonertc.\(schema)".utf8.prefix(63)), as: UTF8.self)
        // A compacted log starts at its newest snapshot, which is durable.
        var replica = SharedLogReplica(configuration: options.configuration)
        try Self.loadSnapshot(c, into: &replica)
        core = Mutex(Core(replica: replica, committed: replica.appliedSequence, durable: replica.appliedSequence))
        push = PushHub(profile: options.pushProfile, seed: options.pushSeed, clock: clock,
                       automatic: options.automaticPush)
        readers = PostgresWorkers(count: options.readers, url: options.url, name: "zonertc-pg-read",
                                  role: "zonertc-read")
        // Old entries' notifications were delivered long ago: do not deliver them again.
        try catchUp(c, deliver: false)
        c.close()
        if !options.readOnly {
            let w = Thread { [self] in writerLoop() }
            w.name = "zonertc-pg-write"
            w.start()
            for id in flusherIDs {
                let f = Thread { [self] in flusherLoop(row: id) }
                f.name = "zonertc-pg-flush"
                f.start()
            }
            let l = Thread { [self] in listenerLoop() }
            l.name = "zonertc-pg-listen"
            l.start()
        }
    }

    public var counters: Counters { core.withLock { $0.counters } }

    /// The last log entry this process has applied.
    public var appliedSequence: UInt64 { core.withLock { $0.replica.appliedSequence } }

    // MARK: Requests

    public func perform<T: Sendable>(
        user: String, deviceID: String?, access: StoreAccess,
        _ operation: @escaping @Sendable (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) async throws -> T {
        switch access {
        case .write:
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                let outcome = OutcomeBox<T>()
                let write = PendingWrite(
                    writer: deviceID.map { WriterKey(user: user, device: $0) },
                    execute: { [clock] replica in
                        let ctx = RequestContext(user: user, deviceID: deviceID, now: clock.now())
                        outcome.value = replica.run(ctx, operation)
                    },
                    finish: { failure in
                        if let failure { return continuation.resume(throwing: failure) }
                        guard let value = outcome.value else {
                            return continuation.resume(throwing: StoreError(.internalError, "a write was not run"))
                        }
                        continuation.resume(with: value.mapError { $0 as Error })
                    })
                if !writes.enqueue(write) {
                    continuation.resume(throwing: unavailable("the store is closing"))
                }
            }
        case .read:
            let (result, seen): (Result<T, StoreError>, UInt64) = try await onReader { [self] conn in
                try catchUp(conn, deliver: true)
                return try core.withLock { c throws(StoreError) in
                    if let why = c.rebuildNeeded { throw unavailable("the store is reloading its log (\(why))") }
                    let ctx = RequestContext(user: user, deviceID: deviceID, now: clock.now())
                    return (c.replica.read(ctx, operation), c.replica.appliedSequence)
                }
            }
            try await waitDurable(seen)
            return try result.get()
        }
    }

    /// Reads the log up to its head now and delivers what it owes this process's push streams.
    public func synchronize() async throws {
        try await onReader { [self] conn in try catchUp(conn, deliver: true) }
    }

    public func inspection() async throws -> StoreInspection {
        try await onReader { [self] conn in
            try catchUp(conn, deliver: true)
            let users = try conn.query("SELECT name FROM zonertc_users ORDER BY name")
            let entries = try conn.query(
                "SELECT count(*)::bigint, COALESCE(sum(length(entry)), 0)::bigint FROM zonertc_log")
            let now = clock.now()
            var report = core.withLock { $0.replica.inspection(now: now) }
            report.users = Array(Set(report.users + (0..<users.count).compactMap { users.text($0, 0) })).sorted()
            report.journalEntries = Int(try entries.int8(0, 0))
            report.journalBytes = Int(try entries.int8(0, 1))
            report.generation = appliedSequence
            return report
        }
    }

    /// How many times the server has flushed its WAL to disk since its statistics were reset
    /// (`pg_stat_wal.wal_sync`, cluster-wide): with the writes made meanwhile, how well commits
    /// grouped.
    public func walFlushes() async throws -> Int64 {
        try await onReader { conn in try conn.query("SELECT wal_sync FROM pg_stat_wal").int8(0, 0) }
    }

    public func close() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        writes.stop()
        flushes.stop()
        readers.stop()
        push.stop()
    }

    // MARK: Shared steps

    /// Runs `body` with a reader's connection; database failures become TRY_AGAIN_LATER. With
    /// `idempotent`, a connection found broken (the server restarted since its last use) is
    /// replaced and `body` runs once more on the new one.
    func onReader<R: Sendable>(idempotent: Bool = true,
                               _ body: @escaping @Sendable (PostgresConnection) throws -> R) async throws -> R {
        do {
            return try await readers.run { slot in
                do {
                    return try body(try slot.connection())
                } catch let e as PostgresError where e.kind == .connection && idempotent {
                    slot.discard()
                    return try body(try slot.connection())
                }
            }
        } catch let e as PostgresError {
            core.withLock { $0.counters.failures += 1 }
            throw unavailable("database: \(e)")
        }
    }

    /// Applies the log's entries after the replica's, page by page, and takes in how far the log
    /// is durable; with `deliver`, the notifications of durable entries go to the push hub (at
    /// open, old entries' notifications were delivered long ago). Applies nothing while a batch
    /// of this process is committing (the replica is ahead of the database then; its readers
    /// wait for the commit anyway).
    func catchUp(_ conn: PostgresConnection, deliver: Bool) throws {
        while true {
            let from: UInt64 = try core.withLock { c throws(StoreError) in
                if let why = c.rebuildNeeded { throw unavailable("the store is reloading its log (\(why))") }
                return c.replica.appliedSequence
            }
            let page = try readLog(conn, after: from)
            if !absorb(page, deliver: deliver) || page.entries.count < LogPage.limit { return }
        }
    }

    /// Applies a page of the log read by `readLog` and takes in its durable mark; with `deliver`,
    /// the notifications of durable entries go to the push hub. Returns whether the replica was
    /// following the log (false while a batch of this process is committing, or it needs a rebuild).
    func absorb(_ page: LogPage, deliver: Bool) -> Bool {
        var following = false
        typealias Released = (notes: [DeviceNotification], ready: [CheckedContinuation<Void, Error>],
                              covered: [PendingWrite])
        let (notes, ready, covered) = core.withLock { c -> Released in
            c.noteServer(start: page.serverStart)
            guard c.rebuildNeeded == nil else { return ([], [], []) }
            following = c.replica.appliedSequence <= c.committed
            if following {
                for (seq, payload) in page.entries {
                    do {
                        let owed = try c.replica.apply(sequence: seq, payload: payload)
                        if deliver && !owed.isEmpty { c.pendingNotes.append((seq, owed)) }
                        c.counters.entriesApplied += 1
                    } catch {
                        // An entry this build cannot apply: refuse to serve from a replica that skipped it.
                        c.rebuildNeeded = "\(error)"
                        c.counters.failures += 1
                        log.error("cannot apply the log", ["entry": "\(seq)", "error": "\(error)"])
                        following = false
                        break
                    }
                    c.committed = max(c.committed, seq)
                }
            }
            let covered = c.takeCovered(upTo: page.durableMark, server: page.serverStart)
            c.counters.sharedAcknowledgements += covered.count
            let (notes, ready) = c.markDurable(page.durableMark)
            return (notes, ready, covered)
        }
        for w in ready { w.resume() }
        for w in covered { w.finish(nil) }
        if !notes.isEmpty { push.submit(notes) }
        return following
    }

    /// Up to `LogPage.limit` entries after `sequence`, with the durable mark and the server's
    /// start read in the same snapshot (one round trip).
    func readLog(_ conn: PostgresConnection, after sequence: UInt64) throws -> LogPage {
        try LogPage(try conn.query(LogPage.query, LogPage.parameters(after: sequence)))
    }

    /// Waits until entry `sequence` is durable (a read that saw entries not yet flushed). Asks
    /// the flusher to cover what is committed, so the wait ends even if the daemon that wrote
    /// those entries died before flushing them.
    func waitDurable(_ sequence: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            // nil: durable already; else queued (whoever moves the mark past it resumes it) and
            // the flush to ask for, if any.
            let queued = core.withLock { c -> FlushRequest?? in
                if c.durable >= sequence { return nil }
                c.waiters.append((sequence, continuation))
                let upTo = min(sequence, c.committed)
                return .some(upTo > c.durable ? FlushRequest(upTo: upTo, serverStart: c.serverStart, writes: []) : nil)
            }
            guard let queued else { return continuation.resume() }
            if let flush = queued, !flushes.enqueue(flush) {
                let waiting = core.withLock { c in c.abandonUndurable("the store is closing") }
                for w in waiting { w.resume(throwing: unavailable("the store is closing")) }
            }
        }
    }
}

extension PostgresStore.Core {
    /// Entries up to `mark` are durable: returns the notifications and the reads that waited for that.
    mutating func markDurable(_ mark: UInt64) -> (notes: [DeviceNotification],
                                                   ready: [CheckedContinuation<Void, Error>]) {
        durable = max(durable, mark)
        var notes: [DeviceNotification] = []
        let released = pendingNotes.prefix { $0.sequence <= durable }.count
        for p in pendingNotes.prefix(released) { notes += p.notes }
        pendingNotes.removeFirst(released)
        guard !waiters.isEmpty else { return (notes, []) }
        let ready = waiters.filter { $0.sequence <= durable }.map(\.continuation)
        waiters.removeAll { $0.sequence <= durable }
        return (notes, ready)
    }

    /// Takes out the writes whose entries a durable mark `mark` covers, made on the server that
    /// started at `start`. A mark from another server (a restart since they committed) proves
    /// nothing about them: the entries it counts may be others written after theirs were lost.
    mutating func takeCovered(upTo mark: UInt64, server start: [UInt8]?) -> [PendingWrite] {
        guard let start else { return [] }
        return takeUnacknowledged { $0.upTo <= mark && $0.serverStart == start }
    }

    /// Takes out the unacknowledged writes of the requests `matching` selects: whoever takes a
    /// write answers it, once.
    mutating func takeUnacknowledged(_ matching: (FlushRequest) -> Bool) -> [PendingWrite] {
        guard unacknowledged.contains(where: matching) else { return [] }
        var taken: [PendingWrite] = []
        unacknowledged.removeAll { r in
            guard matching(r) else { return false }
            taken += r.writes
            return true
        }
        returning.answered(taken.lazy.map(\.writer), at: Stopwatch.monotonicNanoseconds())
        return taken
    }

    /// Takes in the server's start time. After a restart, entries applied here but not durable
    /// may be gone from the log (and others written in their place): the replica must be rebuilt.
    mutating func noteServer(start: [UInt8]?) {
        guard let start, start != serverStart else { return }
        if serverStart != nil, replica.appliedSequence > durable, rebuildNeeded == nil {
            rebuildNeeded = "the database restarted while entries after \(durable) were not durable"
        }
        serverStart = start
    }

    /// Entries after the durable mark may be lost (a failed commit or flush): marks the replica
    /// for rebuilding if it holds any, drops their notifications (a rebuild delivers what is
    /// still in the log) and returns the reads waiting for them, to be failed.
    mutating func abandonUndurable(_ why: String) -> [CheckedContinuation<Void, Error>] {
        guard replica.appliedSequence > durable else { return [] }
        if rebuildNeeded == nil { rebuildNeeded = why }
        pendingNotes.removeAll()
        defer { waiters.removeAll() }
        return waiters.map(\.continuation)
    }
}

/// A page of the shared log as one query reads it.
struct LogPage {
    static let limit = 1000
    var entries: [(sequence: UInt64, payload: [UInt8])] = []
    /// Entries up to here are durable (the highest row of `zonertc_durable`).
    var durableMark: UInt64 = 0
    /// `pg_postmaster_start_time()` as text.
    var serverStart: [UInt8]?

    /// One row at least: the durable mark and the server's start, with the entries if any.
    static let query = """
        SELECT l.seq, l.entry, d.mark, pg_postmaster_start_time()::text
        FROM (SELECT COALESCE(max(seq), 0) AS mark FROM zonertc_durable) d
        LEFT JOIN LATERAL (SELECT seq, entry FROM zonertc_log WHERE seq > $1 ORDER BY seq LIMIT \(limit)) l ON true
        ORDER BY l.seq
        """

    static func parameters(after sequence: UInt64) -> [PostgresConnection.Parameter] {
        [.int8(Int64(clamping: sequence))]
    }

    init() {}

    /// The page in `rows` (binary format) of `query`.
    init(_ rows: PostgresConnection.Rows) throws(PostgresError) {
        guard rows.count > 0 else { return }
        durableMark = UInt64(clamping: try rows.int8(0, 2))
        serverStart = rows.rows[0][3]
        for i in 0..<rows.count where rows.rows[i][0] != nil {
            entries.append((UInt64(clamping: try rows.int8(i, 0)), rows.rows[i][1] ?? []))
        }
    }
}

/// TRY_AGAIN_LATER with a retryAfter: what clients see while the database cannot be reached.
func unavailable(_ message: String) -> StoreError {
    StoreError(.serviceUnavailable, message, retryAfter: 1)
}

/// Where a write's result waits between running (writer thread) and its commit.
final class OutcomeBox<T: Sendable>: @unchecked Sendable {
    var value: Result<T, StoreError>?
}
#endif
