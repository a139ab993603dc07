import ZoneCore

/// The engine kept in step with a log that several processes append to (the PostgreSQL
/// backend's `zonertc_log`): the same semantics, whichever process serves a request.
///
/// Sans-I/O: the driver reads entries from the log and hands them over in order (`apply`), and,
/// holding the log's write lock with this replica caught up to the log's head, runs a batch of
/// write requests (`run`) and appends what `sealBatch` returns in the same transaction. Because
/// writes run only at the head under that lock, every check an operation makes — a change tag
/// under `ifServerRecordUnchanged`, a share's permission — is decided against the one order the
/// database gave all writers. Change tags and tokens follow from the log alone, so they mean the
/// same in every process and after restarts.
public struct SharedLogReplica: Sendable {
    /// Why the replica cannot follow the log; the driver starts a new replica from the first entry.
    public struct Divergence: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public private(set) var engine: StoreEngine
    /// The last log entry applied here (0: none). During a batch, the entry being built.
    public private(set) var appliedSequence: UInt64 = 0
    private var batchMutations: [Mutation] = []
    private var batchNotes: [DeviceNotification] = []

    public init(configuration: StoreConfiguration) {
        engine = StoreEngine(configuration: configuration)
    }

    /// Applies log entry `sequence`; returns the notifications it owes devices. Entries already
    /// applied are skipped (they came back from the log after this process wrote them).
    public mutating func apply(sequence: UInt64, payload: [UInt8]) throws(Divergence) -> [DeviceNotification] {
        guard sequence > appliedSequence else { return [] }
        guard sequence == appliedSequence &+ 1 else {
            throw Divergence(description: "log entry \(sequence) follows \(appliedSequence): entries are missing")
        }
        let decoded: ([Mutation], [DeviceNotification])
        do { decoded = try SharedLogEntryCodec.decode(payload) } catch {
            throw Divergence(description: "log entry \(sequence): \(error)")
        }
        for m in decoded.0 { engine.replay(m) }
        appliedSequence = sequence
        return decoded.1
    }

    /// Runs a read at the replica's current state. A read that tried to change the store is a
    /// programmer error; it is refused and the replica must be rebuilt.
    public mutating func read<T>(
        _ ctx: RequestContext, _ operation: (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) -> Result<T, StoreError> {
        let result: Result<T, StoreError>
        do throws(StoreError) { result = .success(try operation(&engine, ctx)) } catch { result = .failure(error) }
        _ = engine.drainNotifications()
        if !engine.drainMutations().isEmpty {
            return .failure(StoreError(.internalError, "a read changed the store"))
        }
        return result
    }

    /// Runs one write request of the batch under way; its effects join the batch's entry.
    public mutating func run<T>(
        _ ctx: RequestContext, _ operation: (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) -> Result<T, StoreError> {
        let result: Result<T, StoreError>
        do throws(StoreError) { result = .success(try operation(&engine, ctx)) } catch { result = .failure(error) }
        batchMutations.append(contentsOf: engine.drainMutations())
        batchNotes.append(contentsOf: engine.drainNotifications())
        return result
    }

    /// The entry the batch makes, numbered after the last applied one, or nil if nothing changed.
    /// The replica counts it as applied; if the driver cannot commit it, it must rebuild.
    public mutating func sealBatch() -> (sequence: UInt64, payload: [UInt8], notifications: [DeviceNotification])? {
        defer {
            batchMutations.removeAll(keepingCapacity: true)
            batchNotes.removeAll(keepingCapacity: true)
        }
        guard !batchMutations.isEmpty else { return nil }
        appliedSequence &+= 1
        return (appliedSequence, SharedLogEntryCodec.encode(batchMutations, batchNotes), batchNotes)
    }

    /// The state after entry `appliedSequence`, for compacting the log: a replica that loads it
    /// needs only the entries after that one. Tombstones deleted before `pruneTombstonesBeforeMs`
    /// are left out (no unexpired change token needs them), as in the journal's snapshot.
    public func snapshot(pruneTombstonesBeforeMs: Int64) -> [UInt8] {
        SnapshotCodec.encode(engine.state, generation: appliedSequence,
                             pruneTombstonesBeforeMs: pruneTombstonesBeforeMs)
    }

    /// Starts from a snapshot taken after entry `sequence` (the log before it may be gone).
    public mutating func load(snapshot: [UInt8], sequence: UInt64) throws(Divergence) {
        let decoded: (state: StoreState, generation: UInt64)
        do { decoded = try SnapshotCodec.decode(snapshot) } catch {
            throw Divergence(description: "snapshot after entry \(sequence): \(error)")
        }
        guard decoded.generation == sequence else {
            throw Divergence(description:
                "the snapshot filed after entry \(sequence) was taken after \(decoded.generation)")
        }
        engine.state = decoded.state
        appliedSequence = sequence
    }

    /// What the store holds, for `zonertc store inspect`.
    public func inspection(now: Instant) -> StoreInspection { engine.inspection(now: now) }
}
