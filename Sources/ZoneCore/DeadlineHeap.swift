/// A binary min-heap of (instant, id): the next deadline in O(1), insert and remove in O(log n).
/// Timers of the event loop, push deliveries and the simulator's events all queue on one of these.
public struct DeadlineHeap: Sendable {
    private var items: [(due: Instant, id: UInt64)] = []

    public init() {}

    /// The earliest entry (ties: the smaller id).
    public var min: (due: Instant, id: UInt64)? { items.first }
    public var count: Int { items.count }

    private static func less(_ a: (due: Instant, id: UInt64), _ b: (due: Instant, id: UInt64)) -> Bool {
        a.due < b.due || (a.due == b.due && a.id < b.id)
    }

    public mutating func push(due: Instant, id: UInt64) {
        items.append((due, id))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.less(items[i], items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    public mutating func popMin() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < items.count && Self.less(items[l], items[smallest]) { smallest = l }
            if r < items.count && Self.less(items[r], items[smallest]) { smallest = r }
            if smallest == i { return }
            items.swapAt(i, smallest)
            i = smallest
        }
    }
}
