/// A point in time, in nanoseconds since the Unix epoch.
///
/// Every protocol machine takes `now: Instant` as a parameter and never reads a clock itself;
/// the wall clock and the manual clock (tests, simulator) both produce values of this type.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) {
        self.nanosecondsSinceEpoch = nanosecondsSinceEpoch
    }

    public static func milliseconds(_ ms: Int64) -> Instant {
        Instant(nanosecondsSinceEpoch: ms &* 1_000_000)
    }

    public static func seconds(_ s: Int64) -> Instant {
        Instant(nanosecondsSinceEpoch: s &* 1_000_000_000)
    }

    /// The Unix epoch itself; manual clocks start here unless told otherwise.
    public static let zero = Instant(nanosecondsSinceEpoch: 0)

    /// Whole milliseconds since the Unix epoch (rounded down), as CloudKit timestamps carry them.
    public var millisecondsSinceEpoch: Int64 {
        nanosecondsSinceEpoch >= 0
            ? nanosecondsSinceEpoch / 1_000_000
            : (nanosecondsSinceEpoch - 999_999) / 1_000_000
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanosecondsSinceEpoch: lhs.nanosecondsSinceEpoch &+ rhs.nanoseconds)
    }

    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanosecondsSinceEpoch: lhs.nanosecondsSinceEpoch &- rhs.nanoseconds)
    }

    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .nanoseconds(lhs.nanosecondsSinceEpoch &- rhs.nanosecondsSinceEpoch)
    }

    public static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }

    /// The earlier of two optional instants (nil when both are): the next deadline of machines
    /// that ask several parts, without building an array each time they are asked.
    @inlinable
    public static func earliest(_ a: Instant?, _ b: Instant?) -> Instant? {
        guard let a else { return b }
        guard let b else { return a }
        return b < a ? b : a
    }

    public var description: String {
        let ns = nanosecondsSinceEpoch
        return "\(ns / 1_000_000_000).\(String(format9(abs(ns % 1_000_000_000))))s"
    }
}

private func format9(_ v: Int64) -> String {
    let s = String(v)
    return String(repeating: "0", count: max(0, 9 - s.count)) + s
}

extension Duration {
    /// The whole duration in nanoseconds, saturating at the bounds of `Int64`.
    @inlinable
    public var nanoseconds: Int64 {
        // Most durations here (latencies, timers) hold fewer than 2⁶³ attoseconds (about 9.2 s):
        // then the count is one 64-bit word and one division, where `components` divides 128-bit
        // numbers in the runtime (every `Instant ± Duration` of a simulated call comes here).
        let low = Int64(bitPattern: _low)
        if _high == low >> 63 { return low / 1_000_000_000 }
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return ns &+ attoseconds / 1_000_000_000
    }

    /// The duration in (fractional) milliseconds, for reports.
    public var milliseconds: Double { Double(nanoseconds) / 1e6 }

    /// The duration in (fractional) seconds.
    public var seconds: Double { Double(nanoseconds) / 1e9 }
}
