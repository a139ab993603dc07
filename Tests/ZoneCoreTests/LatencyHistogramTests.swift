import Foundation
import Testing
@testable import ZoneCore

@Test func bucketsTileTheWholeRange() {
    #expect(LatencyHistogram.bucketCount == 3776)
    var expectedLower: UInt64 = 0
    for index in 0..<LatencyHistogram.bucketCount {
        let (lower, width) = LatencyHistogram.bucketBounds(index)
        #expect(lower == expectedLower, "bucket \(index)")
        #expect(LatencyHistogram.bucketIndex(lower) == index)
        #expect(LatencyHistogram.bucketIndex(lower + (width - 1)) == index)
        // No bucket is wider than 1/64 of its smallest value (the exact ones are 1 wide).
        #expect(width == 1 || width * 64 <= lower, "bucket \(index)")
        expectedLower = lower &+ width
    }
    #expect(expectedLower == 0)  // the last bucket ends exactly at 2^64
    #expect(LatencyHistogram.bucketIndex(.max) == LatencyHistogram.bucketCount - 1)
}

@Test func smallValuesAreExact() {
    var histogram = LatencyHistogram()
    for value in 0..<UInt64(128) { histogram.record(value) }
    #expect(histogram.count == 128)
    #expect(histogram.min == .zero)
    #expect(histogram.max == .nanoseconds(127))
    #expect(histogram.mean == .nanoseconds(63))  // 63.5 rounded down
    #expect(histogram.percentile(50) == .nanoseconds(63))  // rank 64 of 128
    #expect(histogram.percentile(90) == .nanoseconds(115))  // rank ceil(115.2) = 116
    #expect(histogram.percentile(99) == .nanoseconds(126))  // rank ceil(126.72) = 127
    #expect(histogram.percentile(100) == .nanoseconds(127))
    #expect(histogram.percentile(0) == .zero)
    for value in 0..<UInt64(128) {
        // Value v has rank v + 1; ask just above the previous rank.
        let p = (Double(value) + 0.5) / 128 * 100
        #expect(histogram.percentile(p) == .nanoseconds(Int64(value)))
    }
}

@Test func singleValue() {
    var histogram = LatencyHistogram()
    histogram.record(.milliseconds(3))
    for p in [0.0, 1, 50, 99.99, 100] { #expect(histogram.percentile(p) == .milliseconds(3)) }
    #expect(histogram.min == .milliseconds(3) && histogram.max == .milliseconds(3))
    #expect(histogram.mean == .milliseconds(3))
}

@Test func percentilesStayWithinBucketErrorOfExactValues() {
    var random = SeededRandom(seed: 2026)
    var histogram = LatencyHistogram()
    var values: [UInt64] = []
    // Log-uniform from 1 ns to about 17 s, plus a cluster around 1 ms: every octave gets exercised.
    for _ in 0..<200_000 {
        let value = random.chance(0.3)
            ? UInt64(max(0, 1_000_000 + 50_000 * random.nextGaussian()))
            : UInt64(exp2(random.nextUnit() * 34))
        values.append(value)
        histogram.record(value)
    }
    values.sort()
    let count = values.count
    #expect(histogram.min == .nanoseconds(Int64(values.first!)))
    #expect(histogram.max == .nanoseconds(Int64(values.last!)))
    #expect(histogram.mean == .nanoseconds(Int64(values.reduce(UInt128(0)) { $0 + UInt128($1) } / UInt128(count))))
    for p in [0.0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100] {
        let rank = max(1, Int((p / 100 * Double(count)).rounded(.up)))
        let exact = Double(values[rank - 1])
        let estimate = Double(histogram.percentile(p).nanoseconds)
        // Midpoint of a bucket at most 1/64 as wide as its values: within 1/128 of exact.
        #expect(abs(estimate - exact) <= exact / 128, "p\(p): \(estimate) vs \(exact)")
    }
}

@Test func mergeEqualsRecordingBoth() {
    var random = SeededRandom(seed: 7)
    var a = LatencyHistogram()
    var b = LatencyHistogram()
    var both = LatencyHistogram()
    for i in 0..<10_000 {
        let value = random.next() >> (random.next() % 64)
        if i % 3 == 0 { a.record(value) } else { b.record(value) }
        both.record(value)
    }
    var merged = a
    merged.merge(b)
    #expect(merged == both)
    #expect(merged.summary == both.summary)
    // Merging an empty histogram changes nothing, and merging into an empty one copies.
    var same = both
    same.merge(LatencyHistogram())
    #expect(same == both)
    var fromEmpty = LatencyHistogram()
    fromEmpty.merge(both)
    #expect(fromEmpty == both)
}

@Test func emptyHistogramIsAllZeros() throws {
    let histogram = LatencyHistogram()
    #expect(histogram.isEmpty)
    #expect(histogram.count == 0)
    for p in [0.0, 50, 100] { #expect(histogram.percentile(p) == .zero) }
    #expect(histogram.min == .zero && histogram.max == .zero && histogram.mean == .zero)
    let summary = histogram.summary
    #expect(summary == LatencySummary(count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0, meanMs: 0))
    #expect(summary.description == "n=0 p50=0.000ms p90=0.000ms p99=0.000ms max=0.000ms mean=0.000ms")
}

@Test func resetForgetsEverything() {
    var histogram = LatencyHistogram()
    for value in [UInt64(5), 500, 5_000_000] { histogram.record(value) }
    histogram.reset()
    #expect(histogram == LatencyHistogram())
    // A reset histogram keeps its counters; a fresh one allocates them on its first value.
    var fresh = LatencyHistogram()
    histogram.record(700)
    fresh.record(700)
    #expect(histogram == fresh)
    #expect(histogram != LatencyHistogram())
    #expect(fresh.percentile(50) == histogram.percentile(50))
}

@Test func extremesAndDurations() {
    var histogram = LatencyHistogram()
    histogram.record(UInt64.max)
    histogram.record(.nanoseconds(-5))  // a clock step backwards counts as zero
    #expect(histogram.count == 2)
    #expect(histogram.min == .zero)
    // Durations top out at Int64.max nanoseconds; larger values saturate when reported.
    #expect(histogram.max == .nanoseconds(Int64.max))
    #expect(histogram.percentile(100) == .nanoseconds(Int64.max))
    #expect(histogram.percentile(.nan) == .zero)
    #expect(histogram.percentile(-3) == .zero)
    #expect(histogram.percentile(250) == .nanoseconds(Int64.max))
}

@Test func summaryPrintsMillisecondsAndEncodesJSON() throws {
    var histogram = LatencyHistogram()
    for ms in 1...100 { histogram.record(.milliseconds(ms)) }
    let summary = histogram.summary
    #expect(summary.count == 100)
    #expect(abs(summary.p50Ms - 50) <= 50.0 / 128)
    #expect(abs(summary.p90Ms - 90) <= 90.0 / 128)
    #expect(abs(summary.p99Ms - 99) <= 99.0 / 128)
    #expect(summary.maxMs == 100)
    #expect(summary.meanMs == 50.5)

    let fixed = LatencySummary(count: 3, p50Ms: 1.5, p90Ms: 2.25, p99Ms: 4, maxMs: 4.125, meanMs: 0.0005)
    #expect(fixed.description == "n=3 p50=1.500ms p90=2.250ms p99=4.000ms max=4.125ms mean=0.0005ms")
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let json = String(decoding: try encoder.encode(fixed), as: UTF8.self)
    #expect(json == #"{"count":3,"maxMs":4.125,"meanMs":0.0005,"p50Ms":1.5,"p90Ms":2.25,"p99Ms":4}"#)
    #expect(try JSONDecoder().decode(LatencySummary.self, from: Data(json.utf8)) == fixed)
}
