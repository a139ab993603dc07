// Arithmetic on millisecond timestamps that other users wrote: held at the ends of the range, never
// trapping (a hostile `joinedAt` near `Int64.min` must not stop the reader).

extension Int64 {
    /// `self + other`, held at the ends of the range instead of trapping (remote values take part).
    func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, held at the ends of the range instead of trapping.
    func subtractingSaturated(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other > 0 ? .min : .max) : difference
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down (at most `Int64.max`).
    var wholeMilliseconds: Int64 { nanoseconds / 1_000_000 }
}
