#if PostgreSQL
/// Who wrote: a device of a user. Writes without a device cannot be told apart and are not expected.
struct WriterKey: Hashable, Sendable {
    var user: String
    var device: String
}

/// The writers this daemon answered a moment ago and has not heard from since: a client that
/// writes in a loop (a signaling peer saving its candidates, a load test) sends its next write as
/// soon as its answer lands, so a batch can expect one write from each. An answer older than the
/// window no longer counts, so a client that stopped writing is waited for at most once.
struct ReturningWriters {
    private var answeredAt: [WriterKey: UInt64] = [:]

    /// `writers` were answered at `now` (monotonic nanoseconds).
    mutating func answered<S: Sequence>(_ writers: S, at now: UInt64) where S.Element == WriterKey? {
        for case let writer? in writers { answeredAt[writer] = now }
    }

    /// A write from `writer` arrived: it is no longer expected.
    mutating func arrived(_ writer: WriterKey?) {
        if let writer, !answeredAt.isEmpty { answeredAt[writer] = nil }
    }

    /// Writers answered within `window` of `now` and not heard from since; forgets older answers.
    mutating func expected(at now: UInt64, window: UInt64) -> Int {
        guard !answeredAt.isEmpty else { return 0 }
        answeredAt = answeredAt.filter { now &- $0.value <= window }
        return answeredAt.count
    }
}
#endif
