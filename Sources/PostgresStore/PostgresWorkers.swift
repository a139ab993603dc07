#if PostgreSQL
import Foundation
import RecordStore
import ZoneCore

/// A fixed number of threads of our own, each with its own PostgreSQL connection, running jobs
/// from one queue: blocking libpq calls never occupy a thread of Swift concurrency's pool, and
/// the database never sees more than `count` connections from here.
final class PostgresWorkers: @unchecked Sendable {
    /// A worker's connection, opened on first use and again after it broke.
    final class Slot: @unchecked Sendable {
        let url: String
        let role: String
        private var open: PostgresConnection?

        init(url: String, role: String) {
            self.url = url
            self.role = role
        }

        func connection() throws(PostgresError) -> PostgresConnection {
            if let open, open.isOpen { return open }
            open?.close()
            open = nil
            let c = try PostgresConnection(url: url, role: role)
            open = c
            return c
        }

        /// Drops a connection that failed, so the next job connects anew.
        func discard() {
            open?.close()
            open = nil
        }
    }

    private let condition = NSCondition()
    private var jobs = OutputQueue<(Slot) -> Void>()
    private var stopped = false

    init(count: Int, url: String, name: String, role: String) {
        for i in 0..<max(count, 1) {
            let slot = Slot(url: url, role: role)
            let t = Thread { [self] in self.work(slot) }
            t.name = "\(name)-\(i)"
            t.start()
        }
    }

    /// Runs `body` on a worker with its connection slot; throws what it throws.
    func run<R: Sendable>(_ body: @escaping @Sendable (Slot) throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, Error>) in
            let job: (Slot) -> Void = { slot in
                do {
                    continuation.resume(returning: try body(slot))
                } catch let e as PostgresError {
                    if e.kind == .connection { slot.discard() }
                    continuation.resume(throwing: e)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            condition.lock()
            if stopped {
                condition.unlock()
                continuation.resume(throwing: StoreError(.serviceUnavailable, "the store is closing", retryAfter: 1))
                return
            }
            jobs.append(job)
            condition.unlock()
            // Signalled once the lock is free, so the woken worker does not block on it again.
            condition.signal()
        }
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work(_ slot: Slot) {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            // No job left means stopped: the queued ones run first.
            guard let job = jobs.pop() else {
                condition.unlock()
                slot.discard()
                return
            }
            condition.unlock()
            job(slot)
        }
    }
}

/// Runs a blocking `body` on a thread of its own and awaits it (for one-off work such as opening).
func onOwnThread<R: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, Error>) in
        let t = Thread { continuation.resume(with: Result { try body() }) }
        t.name = name
        t.start()
    }
}
#endif
