import Foundation

/// A mergeable histogram of latencies in nanoseconds, for benchmarks and load tests.
///
/// Buckets are log-linear, as in HdrHistogram with two significant hex digits: values below
/// 128 ns each have their own bucket (exact), and every power of two from 128 ns up to 2⁶⁴ ns is
/// split into 64 equal sub-buckets. A bucket is therefore at most 1/64 (1.6 %) of its lower
/// bound wide, and because percentiles report the bucket's midpoint, a percentile is within
/// 1/128 (0.8 %) of the exact recorded value of the same rank. Count, minimum, maximum and mean
/// are exact.
///
/// The 3,776 counters (30 KB) are allocated by the first `record` or `merge`, not by `init`: a
/// histogram that never records (a simulated call's media, which has none) costs nothing. After
/// that `record` only increments one of them (unless the histogram was copied and is written for
/// the first time since: copy-on-write).
public struct LatencyHistogram: Sendable, Equatable {
    /// Values below this are counted exactly, one bucket per nanosecond.
    static let exactLimit: UInt64 = 128
    /// Sub-buckets per power of two at and above `exactLimit`.
    static let subBucketsPerOctave = 64
    /// Buckets for 0..<128 plus 64 for each power of two from 2⁷ to 2⁶³.
    public static let bucketCount = 128 + (63 - 7 + 1) * 64

    /// Empty until the first value is recorded or merged; `bucketCount` counters after that.
    private var counts: [UInt64] = []
    /// How many values were recorded.
    public private(set) var count: UInt64 = 0
    private var minimum: UInt64 = .max
    private var maximum: UInt64 = 0
    // 128 bits, so 2⁶⁴ values of 2⁶⁴ ns cannot overflow it and the mean stays exact. Two halves,
    // not a `UInt128`: see `IPv6Bits` for the debug-build alignment fault that type triggers.
    private var sumHigh: UInt64 = 0
    private var sumLow: UInt64 = 0
    private var sum: UInt128 { UInt128(sumHigh) << 64 | UInt128(sumLow) }

    private mutating func addToSum(_ high: UInt64, _ low: UInt64) {
        let (l, carry) = sumLow.addingReportingOverflow(low)
        sumLow = l
        sumHigh &+= high &+ (carry ? 1 : 0)
    }

    public init() {}

    /// Records one value in nanoseconds.
    @inline(__always)
    public mutating func record(_ nanoseconds: UInt64) {
        if counts.isEmpty { allocateCounts() }
        counts[LatencyHistogram.bucketIndex(nanoseconds)] &+= 1
        count &+= 1
        addToSum(0, nanoseconds)
        if nanoseconds < minimum { minimum = nanoseconds }
        if nanoseconds > maximum { maximum = nanoseconds }
    }

    /// Records one duration; negative durations (a clock stepped backwards) count as zero.
    @inline(__always)
    public mutating func record(_ duration: Duration) {
        record(UInt64(clamping: duration.nanoseconds))
    }

    /// Adds every value recorded in `other`, as if they had been recorded here.
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        if counts.isEmpty { allocateCounts() }
        counts.withUnsafeMutableBufferPointer { mine in
            other.counts.withUnsafeBufferPointer { theirs in
                for index in mine.indices { mine[index] &+= theirs[index] }
            }
        }
        count &+= other.count
        addToSum(other.sumHigh, other.sumLow)
        minimum = Swift.min(minimum, other.minimum)
        maximum = Swift.max(maximum, other.maximum)
    }

    @inline(never)
    private mutating func allocateCounts() {
        counts = Array(repeating: 0, count: LatencyHistogram.bucketCount)
    }

    /// Equal when the same values were recorded. Empty histograms are equal whether or not their
    /// counters were ever allocated (a reset one keeps them, all zero); non-empty ones have them.
    public static func == (a: LatencyHistogram, b: LatencyHistogram) -> Bool {
        a.count == b.count && a.minimum == b.minimum && a.maximum == b.maximum && a.sumHigh == b.sumHigh
            && a.sumLow == b.sumLow && (a.count == 0 || a.counts == b.counts)
    }

    /// Forgets every recorded value, keeping the bucket storage.
    public mutating func reset() {
        counts.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        count = 0
        minimum = .max
        maximum = 0
        sumHigh = 0
        sumLow = 0
    }

    /// Whether nothing has been recorded.
    public var isEmpty: Bool { count == 0 }

    /// The smallest recorded value, exactly; zero when empty.
    public var min: Duration { isEmpty ? .zero : duration(minimum) }

    /// The largest recorded value, exactly; zero when empty.
    public var max: Duration { isEmpty ? .zero : duration(maximum) }

    /// The exact mean, rounded down to a nanosecond; zero when empty.
    public var mean: Duration { isEmpty ? .zero : duration(UInt64(clamping: sum / UInt128(count))) }

    /// The value at percentile `p` (0…100) by nearest rank: the smallest recorded value that at
    /// least `p` percent of the values do not exceed, to within the bucket error (see the type).
    ///
    /// `p` is clamped to 0…100 (NaN counts as 0); `percentile(0)` is the exact minimum and
    /// `percentile(100)` the exact maximum. An empty histogram has no values to rank and returns
    /// zero for every `p`, so reports of idle runs print zeros rather than trapping.
    public func percentile(_ p: Double) -> Duration {
        guard count > 0 else { return .zero }
        let clamped = p.isNaN ? 0 : Swift.min(Swift.max(p, 0), 100)
        // Rank among 1...count; the Double product is exact enough for any count a run produces.
        let rank = Swift.min(count, Swift.max(1, UInt64((clamped / 100 * Double(count)).rounded(.up))))
        if rank == 1 { return duration(minimum) }
        if rank == count { return duration(maximum) }
        var seen: UInt64 = 0
        for index in counts.indices {
            seen &+= counts[index]
            if seen >= rank {
                let (lower, width) = LatencyHistogram.bucketBounds(index)
                let middle = lower + (width - 1) / 2
                return duration(Swift.min(Swift.max(middle, minimum), maximum))
            }
        }
        return duration(maximum)
    }

    /// Count, p50, p90, p99, max and mean, for reports.
    public var summary: LatencySummary {
        LatencySummary(
            count: count,
            p50Ms: percentile(50).milliseconds,
            p90Ms: percentile(90).milliseconds,
            p99Ms: percentile(99).milliseconds,
            maxMs: max.milliseconds,
            meanMs: isEmpty ? 0 : Double(sum) / Double(count) / 1e6)
    }

    /// The bucket holding `value`.
    @inline(__always)
    static func bucketIndex(_ value: UInt64) -> Int {
        if value < exactLimit { return Int(value) }
        let octave = 63 - value.leadingZeroBitCount  // 7...63: value lies in [2^octave, 2^(octave+1))
        let subBucket = Int(truncatingIfNeeded: value >> UInt64(octave - 6)) & (subBucketsPerOctave - 1)
        return Int(exactLimit) + (octave - 7) * subBucketsPerOctave + subBucket
    }

    /// The smallest value in bucket `index` and how many values the bucket holds.
    static func bucketBounds(_ index: Int) -> (lower: UInt64, width: UInt64) {
        if index < Int(exactLimit) { return (UInt64(index), 1) }
        let octave = (index - Int(exactLimit)) / subBucketsPerOctave + 7
        let subBucket = (index - Int(exactLimit)) % subBucketsPerOctave
        let shift = UInt64(octave - 6)
        return (UInt64(subBucketsPerOctave + subBucket) << shift, 1 << shift)
    }

    private func duration(_ nanoseconds: UInt64) -> Duration { .nanoseconds(Int64(clamping: nanoseconds)) }
}

/// The headline numbers of a `LatencyHistogram`, in milliseconds.
///
/// Encodes to JSON as `{"count":…,"p50Ms":…,"p90Ms":…,"p99Ms":…,"maxMs":…,"meanMs":…}` for
/// benchmark reports; an empty histogram gives count 0 and zeros.
public struct LatencySummary: Codable, Sendable, Equatable, CustomStringConvertible {
    /// How many values were recorded.
    public var count: UInt64
    /// Median.
    public var p50Ms: Double
    /// 90th percentile.
    public var p90Ms: Double
    /// 99th percentile.
    public var p99Ms: Double
    /// Maximum (exact).
    public var maxMs: Double
    /// Mean (exact).
    public var meanMs: Double

    public init(count: UInt64, p50Ms: Double, p90Ms: Double, p99Ms: Double, maxMs: Double, meanMs: Double) {
        self.count = count
        self.p50Ms = p50Ms
        self.p90Ms = p90Ms
        self.p99Ms = p99Ms
        self.maxMs = maxMs
        self.meanMs = meanMs
    }

    /// `n=1000 p50=1.234ms p90=2.345ms p99=3.456ms max=4.567ms mean=1.500ms`.
    public var description: String {
        "n=\(count) p50=\(Self.format(p50Ms)) p90=\(Self.format(p90Ms)) p99=\(Self.format(p99Ms))"
            + " max=\(Self.format(maxMs)) mean=\(Self.format(meanMs))"
    }

    /// Three decimals, or three significant digits below 0.1 ms so that microbenchmarks of a few
    /// hundred nanoseconds do not all print as 0.000ms.
    static func format(_ ms: Double) -> String {
        if ms == 0 || ms >= 0.1 { return String(format: "%.3fms", ms) }
        return String(format: "%.3gms", ms)
    }
}
