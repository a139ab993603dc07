#if PostgreSQL
import Foundation
import ZoneCore

/// Work waiting for one thread that takes it in batches: writes for the writer, committed
/// batches for the flusher. Whatever queues while the thread is busy joins its next batch.
final class BatchQueue<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending = OutputQueue<Item>()
    private var stopped = false

    /// Items waiting to be taken.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    /// Queues `item`; false once stopped.
    func enqueue(_ item: Item) -> Bool {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            return false
        }
        pending.append(item)
        condition.unlock()
        // Signalled once the lock is free, so the woken taker does not block on it again.
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
        var items: [Item] = []
        items.reserveCapacity(min(limit, pending.count))
        while items.count < limit, let item = pending.pop() { items.append(item) }
        return items
    }

    /// Moves queued items into `batch` until it holds `target` (never more than `limit`), waiting
    /// until `deadline` for them to queue, or less once stopped. Returns how many it moved.
    @discardableResult
    func gather(into batch: inout [Item], target: Int, limit: Int, deadline: Date) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while batch.count + pending.count < target && !stopped {
            if !condition.wait(until: deadline) { break }
        }
        let n = min(max(limit - batch.count, 0), pending.count)
        guard n > 0 else { return 0 }
        for _ in 0..<n {
            if let item = pending.pop() { batch.append(item) }
        }
        return n
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
#endif
