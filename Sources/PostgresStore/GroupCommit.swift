#if PostgreSQL
/// Group commit for the writer: PostgreSQL's `commit_delay` and `commit_siblings`, decided from
/// what this daemon knows. Each batch pays for its transaction (the lock round trip, the append,
/// the commit, and a synchronous commit to make it durable) whatever its size, so under load a
/// few more writes per batch cost almost nothing and save a whole transaction each.
///
/// A batch waits only for writes there is reason to expect: from each writer whose write this
/// daemon committed and has not answered yet, and from each writer it answered within `delay`
/// that has not written since (`ReturningWriters`): a client writing in a loop sends its next
/// write as soon as its answer lands. A lone writer therefore never waits, a batch commits as
/// soon as the writes it expects have joined, and none waits longer than `delay`.
public struct GroupCommit: Sendable, Equatable {
    /// The longest a batch is held open before the writer takes the log's lock; zero: never.
    public var delay: Duration
    /// A batch this large commits at once.
    public var size: Int

    public init(delay: Duration = .microseconds(800), size: Int = 8) {
        self.delay = delay
        self.size = size
    }

    /// Never holds a batch open.
    public static let off = GroupCommit(delay: .zero, size: 1)

    /// How many writes a batch of `batch` should hold out for, given `expected` more writes it
    /// has reason to expect, and at most `limit` writes per batch: `batch` itself when it should
    /// not wait at all.
    public func target(batch: Int, expected: Int, limit: Int) -> Int {
        guard delay > .zero, batch < size, batch < limit, expected > 0 else { return batch }
        let total = expected > Int.max - batch ? Int.max : batch + expected
        return min(size, limit, total)
    }
}
#endif
