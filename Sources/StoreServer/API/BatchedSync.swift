import Foundation
import Synchronization

/// Makes a file's appends durable with one `fdatasync` for every append that waits while the last
/// one ran (group commit), on a thread of `ThreadPool.blockingIO`: a caller awaits, it never blocks.
///
/// Appends are numbered by the caller in the order they were written (1, 2, …); `durable(through:)`
/// returns once a sync begun after append `n` was written has finished. The journal groups its syncs
/// the same way but also writes in its flusher; a file several processes append to is written under
/// their shared lock by each writer (`UserLog`), so only the sync is batched here.
final class BatchedSync: Sendable {
    struct SyncError: Error, CustomStringConvertible {
        var description: String
    }

    private struct State {
        /// Appends up to here are durable.
        var durable: UInt64 = 0
        /// The highest append someone waits for.
        var wanted: UInt64 = 0
        var syncing = false
        var waiters: [(through: UInt64, continuation: CheckedContinuation<Void, Error>)] = []
        /// A failed sync: the file's state on disk is unknown, so every later wait fails too.
        var failure: SyncError?
    }

    private let fd: Int32
    private let what: String
    private let state = Mutex(State())
    /// Syncs made, for tests and reports.
    private let syncCount = Atomic<Int>(0)

    /// Syncs a duplicate of `fd` (so its owner may close its own at any time); `what` names the file.
    init(fd: Int32, what: String) {
        self.fd = dup(fd)
        self.what = what
    }

    deinit { close(fd) }

    var syncs: Int { syncCount.load(ordering: .relaxed) }

    /// Returns once append `sequence` (and every one before it) is durable.
    func durable(through sequence: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            enum Next { case done, failed(SyncError), wait, lead(UInt64) }
            let next: Next = state.withLock { s in
                if let failure = s.failure { return .failed(failure) }
                if s.durable >= sequence { return .done }
                s.waiters.append((sequence, continuation))
                s.wanted = max(s.wanted, sequence)
                guard !s.syncing else { return .wait }
                s.syncing = true
                return .lead(s.wanted)
            }
            switch next {
            case .done: continuation.resume()
            case .failed(let error): continuation.resume(throwing: error)
            case .wait: break
            case .lead(let target): ThreadPool.blockingIO.run { [self] in syncLoop(from: target) }
            }
        }
    }

    /// Syncs until nobody waits for more: every wait that arrived during a sync shares the next one.
    private func syncLoop(from first: UInt64) {
        var target = first
        while true {
            let failed = fdatasync(fd) != 0 ? SyncError(description: "cannot sync \(what): "
                                                       + String(cString: strerror(errno))) : nil
            syncCount.add(1, ordering: .relaxed)
            let (ready, next): ([(UInt64, CheckedContinuation<Void, Error>)], UInt64?) = state.withLock { s in
                if let failed {
                    s.failure = failed
                    s.syncing = false
                    defer { s.waiters.removeAll() }
                    return (s.waiters, nil)
                }
                s.durable = max(s.durable, target)
                let durable = s.durable
                let ready = s.waiters.filter { $0.through <= durable }
                s.waiters.removeAll { $0.through <= durable }
                if s.wanted > durable { return (ready, s.wanted) }
                s.syncing = false
                return (ready, nil)
            }
            for (_, continuation) in ready {
                if let failed { continuation.resume(throwing: failed) } else { continuation.resume() }
            }
            guard let next else { return }
            target = next
        }
    }
}
