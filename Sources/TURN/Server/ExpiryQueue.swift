import ZoneCore

/// The TURN server's pending expiries, earliest first: one entry per allocation (id: its slot) at
/// the earliest of its own, its permissions' and its channels' expiries, and one per EVEN-PORT
/// reservation (id: its token).
///
/// Entries are never updated or removed in place: a changed expiry queues a new entry and the old
/// one goes stale. The server knows which entry is current (`Allocation.scheduledExpiry`, the
/// reservation's own expiry) and drops stale ones as they reach the front, so a request costs
/// O(log n) rather than a walk over every allocation. Since a client refreshing in a loop would
/// pile up stale entries until their instants pass, a queue holding more than twice the live
/// entries is rebuilt from the server's tables (O(n log n) after at least n pushes).
struct ExpiryQueue: Sendable {
    var allocations = DeadlineHeap()
    var reservations = DeadlineHeap()

    /// Whether `heap` holds so many stale entries beside `live` current ones that it should be rebuilt.
    static func isBloated(_ heap: DeadlineHeap, live: Int) -> Bool {
        heap.count > 2 * live + 64
    }
}
