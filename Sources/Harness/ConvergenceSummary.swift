// The figures of one configuration: convergence percentiles over every call (a call that did not
// converge counts as slower than any that did, so a percentile that falls among the failures
// has no value), means per call of what signaling cost, and the empirical CDF for the chart.

/// What one configuration's calls came to, in the harness's reports.
public struct ConvergenceSummary: Hashable, Sendable, Codable {
    /// Which configuration: the strategy (or `legacy`), the push loss, the NATs, and where the
    /// figures come from (`simulated`, or a real run's name).
    public var strategy: String
    public var pushLoss: Double
    public var nat: String
    public var source: String
    public var trials: Int
    public var converged: Int
    public var failures: Int { trials - converged }
    /// Convergence percentiles and maximum in seconds; nil when the percentile falls among
    /// the calls that did not converge.
    public var p50: Double?
    public var p90: Double?
    public var p99: Double?
    public var max: Double?
    /// Means per call.
    public var storeRequests: Double
    public var recordsFetched: Double
    public var bytesFetched: Double
    public var staleDrops: Double
    public var duplicates: Double
    public var resets: Double
    /// Calls with at least one reset, and resets in all.
    public var callsWithResets: Int
    public var totalResets: Int
    /// Medians (seconds) over the calls that had one.
    public var firstPushMedian: Double?
    public var firstPollMedian: Double?
    /// Connected calls whose path went through the relay.
    public var relayed: Int
    /// Every converged call's time, ascending (the empirical CDF is `i / trials`).
    public var convergenceTimes: [Double]

    public init(strategy: String, pushLoss: Double, nat: String, source: String = "simulated",
                samples: [CallSample]) {
        self.strategy = strategy
        self.pushLoss = pushLoss
        self.nat = nat
        self.source = source
        trials = samples.count
        let times = samples.compactMap(\.convergence).sorted()
        convergenceTimes = times
        converged = times.count
        func percentile(_ p: Double) -> Double? {
            guard !samples.isEmpty else { return nil }
            let rank = Int((p * Double(samples.count)).rounded(.up)) - 1
            let index = Swift.max(0, rank)
            return index < times.count ? times[index] : nil
        }
        p50 = percentile(0.5)
        p90 = percentile(0.9)
        p99 = percentile(0.99)
        max = converged == trials ? times.last : nil
        let n = Double(Swift.max(1, samples.count))
        func mean(_ value: (CallSample) -> Int) -> Double { Double(samples.reduce(0) { $0 + value($1) }) / n }
        storeRequests = mean(\.storeRequests)
        recordsFetched = mean(\.recordsFetched)
        bytesFetched = mean(\.bytesFetched)
        staleDrops = mean(\.staleDrops)
        duplicates = mean(\.duplicates)
        resets = mean(\.resets)
        callsWithResets = samples.filter { $0.resets > 0 }.count
        totalResets = samples.reduce(0) { $0 + $1.resets }
        func median(_ values: [Double]) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted[(sorted.count - 1) / 2]
        }
        firstPushMedian = median(samples.compactMap(\.firstPush))
        firstPollMedian = median(samples.compactMap(\.firstPoll))
        relayed = samples.filter { $0.relayed == true }.count
    }

    /// The slowest converged call, whether or not every call converged.
    public var slowestConverged: Double? { convergenceTimes.last }

    /// The fraction of calls converged within `seconds`.
    public func fractionConverged(within seconds: Double) -> Double {
        guard trials > 0 else { return 0 }
        var lo = 0, hi = convergenceTimes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if convergenceTimes[mid] <= seconds { lo = mid + 1 } else { hi = mid }
        }
        return Double(lo) / Double(trials)
    }
}
