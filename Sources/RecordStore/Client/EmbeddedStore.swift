import Foundation
import Synchronization
import ZoneCore

/// The engine, its journal and its push hub in one process: the embedded record store.
///
/// Operations run on the engine under one lock, in order; a request's mutations become one
/// journal entry, and the caller gets its answer only once that entry is durable under the
/// fsync policy. Reads also wait until everything they saw is durable, so no client ever sees
/// a write that a crash could take back. Notifications go to the push hub only after that.
public final class EmbeddedStore: StoreBackend {
    /// How to open the store.
    public struct Options: Sendable {
        /// Where the journal and snapshots live; nil keeps everything in memory.
        public var directory: String?
        public var fsync: FsyncPolicy = .batch
        public var configuration: StoreConfiguration = .default
        /// Journal size past which the state is compacted into a snapshot.
        public var compactionThreshold = 64 * 1024 * 1024
        public var pushProfile: PushProfile = .lan
        public var pushSeed: UInt64 = 1
        /// Deliver pushes on a thread that follows the wall clock; off for manual clocks.
        public var automaticPush = true

        public init(directory: String? = nil) { self.directory = directory }

        /// In memory, manual push pumping: for tests on a manual clock.
        public static var inMemoryForTests: Options {
            var o = Options()
            o.automaticPush = false
            return o
        }
    }

    private struct Core: ~Copyable {
        var engine: StoreEngine
        var failure: String?
    }

    private let core: Mutex<Core>
    private let writer: JournalWriter?
    private let directory: StoreDirectory?
    private let options: Options
    public let clock: any InstantSource
    public let push: PushHub
    /// What recovery found when the store was opened (nil in memory).
    public let recovered: RecoveryReport?

    /// What opening a durable store found in its directory.
    public struct RecoveryReport: Sendable, Hashable {
        public var generation: UInt64
        public var snapshotBytes: Int
        public var entriesReplayed: Int
        public var tornBytesDropped: Int
    }

    public struct OpenError: Error, CustomStringConvertible {
        public var description: String
    }

    public init(options: Options, clock: any InstantSource = WallClock()) throws {
        self.options = options
        self.clock = clock
        if let path = options.directory {
            do {
                let (dir, engine, writer, recovery) = try StoreDirectory.open(
                    path: path, policy: options.fsync, configuration: options.configuration)
                self.directory = dir
                self.writer = writer
                core = Mutex(Core(engine: engine))
                recovered = RecoveryReport(generation: recovery.generation, snapshotBytes: recovery.snapshotBytes,
                                           entriesReplayed: recovery.entriesReplayed,
                                           tornBytesDropped: recovery.tornBytesDropped)
            } catch {
                throw OpenError(description: "\(error)")
            }
        } else {
            directory = nil
            writer = nil
            recovered = nil
            core = Mutex(Core(engine: StoreEngine(configuration: options.configuration)))
        }
        push = PushHub(profile: options.pushProfile, seed: options.pushSeed, clock: clock,
                       automatic: options.automaticPush)
    }

    /// Runs one request on the engine as `user` on `deviceID`; returns once it is durable.
    public func perform<T: Sendable>(
        user: String, deviceID: String?,
        _ operation: (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) async throws -> T {
        let ctx = RequestContext(user: user, deviceID: deviceID, now: clock.now())
        let step: (Result<T, StoreError>, JournalWriter.LSN?, [DeviceNotification]) = core.withLock { core in
            if let failure = core.failure {
                return (.failure(StoreError(.internalError, "the store stopped accepting requests: \(failure)")), nil, [])
            }
            let result: Result<T, StoreError>
            do throws(StoreError) {
                result = .success(try operation(&core.engine, ctx))
            } catch {
                result = .failure(error)
            }
            let mutations = core.engine.drainMutations()
            let notes = core.engine.drainNotifications()
            guard let writer else { return (result, nil, notes) }
            guard !mutations.isEmpty else { return (result, writer.lastAppended, notes) }
            var w = ByteWriter(capacity: 256)
            MutationCodec.encode(mutations, into: &w)
            do {
                let lsn = try writer.append(w.bytes)
                if writer.fileSize > options.compactionThreshold, let directory {
                    try writer.flushNow()
                    let retention = options.configuration.tokenRetention.nanoseconds / 1_000_000
                    try directory.compact(state: core.engine.state, writer: writer,
                                          pruneTombstonesBeforeMs: ctx.now.millisecondsSinceEpoch - retention)
                }
                return (result, lsn, notes)
            } catch {
                core.failure = "\(error)"
                return (.failure(StoreError(.internalError, "journal: \(error)")), nil, [])
            }
        }
        if let lsn = step.1, let writer {
            do { try await writer.waitDurable(lsn) } catch {
                throw StoreError(.internalError, "journal: \(error)")
            }
        }
        push.submit(step.2)
        return try step.0.get()
    }

    /// One lock orders reads and writes alike here, so the access makes no difference.
    public func perform<T: Sendable>(
        user: String, deviceID: String?, access: StoreAccess,
        _ operation: @escaping @Sendable (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) async throws -> T {
        try await perform(user: user, deviceID: deviceID, operation)
    }

    public func inspection() async throws -> StoreInspection { inspect() }

    /// Delivers the pushes due now (manual pumping).
    @discardableResult
    public func pumpPush() -> Int { push.pump(now: clock.now()) }

    /// Flushes the journal, stops the push hub and closes the files.
    public func close() {
        push.stop()
        writer?.shutdown()
        directory?.release()
    }

    /// Journal facts for reports and benchmarks.
    public struct JournalStatistics: Sendable {
        public var fileBytes: Int
        public var syncs: UInt64
        public var entries: UInt64
        public var generation: UInt64
    }

    public var journalStatistics: JournalStatistics? {
        guard let writer, let directory else { return nil }
        return core.withLock { _ in
            JournalStatistics(fileBytes: writer.fileSize, syncs: writer.syncCount, entries: writer.lastAppended,
                              generation: directory.generation)
        }
    }

    /// A summary of what the store holds, for `zonertc store inspect`.
    public func inspect() -> StoreInspection {
        let now = clock.now()
        var report = core.withLock { $0.engine.inspection(now: now) }
        if let stats = journalStatistics {
            report.journalBytes = stats.fileBytes
            report.generation = stats.generation
        }
        report.snapshotBytes = recovered?.snapshotBytes ?? 0
        return report
    }
}

extension EmbeddedStore {
    /// Reads a store directory without opening it for writing: safe while a daemon runs on it.
    public static func inspect(directory: String, now: Instant = WallClock().now()) throws -> StoreInspection {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OpenError(description: "no store directory at \(directory)")
        }
        do {
            let (engine, recovery, validLength) = try StoreDirectory.recover(path: directory, configuration: .default)
            var report = engine.inspection(now: now)
            report.generation = recovery.generation
            report.snapshotBytes = recovery.snapshotBytes
            report.journalBytes = validLength + recovery.tornBytesDropped
            report.journalEntries = recovery.entriesReplayed
            report.tornBytes = recovery.tornBytesDropped
            return report
        } catch {
            throw OpenError(description: "\(error)")
        }
    }
}
