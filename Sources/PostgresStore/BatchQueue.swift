#if PostgreSQL
import Foundation

/// Work waiting for one thread that takes it in batches: writes for the writer, committed
/// batches for the flusher. Whatever queues while the thread is busy joins its next batch.
final class BatchQueue<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [Item] = []
    private var stopped = false

    /// Queues `item`; false once stopped.
    func enqueue(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return false }
        pending.append(item)
        condition.signal()
        return true
    }

    /// Up to `limit` items, waiting at most `wait` for the first; nil once stopped and empty.
    func take(limit: Int, wait: TimeInterval) -> [Item]? {
        condition.lock()
        defer { condition.unlock() }
        if pending.isEmpty && !stopped && wait > 0 {
            _ = condition.wait(until: Date(timeIntervalSinceNow: wait))
        }
        if pending.isEmpty { return stopped ? nil : [] }
        let n = min(limit, pending.count)
        defer { pending.removeFirst(n) }
        return Array(pending[..<n])
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
#endif
