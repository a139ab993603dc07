// A delay drawn from a distribution: fixed, uniform, or log-normal given by its median and 95th
// percentile (how service latencies are usually published). Drawn from the caller's seeded
// generator.
import Foundation
import ZoneCore

/// How long something takes, as a distribution.
public enum LatencyDistribution: Hashable, Sendable, CustomStringConvertible {
    case fixed(Duration)
    case uniform(Duration, Duration)
    /// Log-normal with this median and 95th percentile.
    case logNormal(median: Duration, p95: Duration)

    /// One draw.
    public func sample(_ random: inout SeededRandom) -> Duration {
        switch self {
        case .fixed(let d):
            return d
        case .uniform(let lo, let hi):
            let span = Double(hi.nanoseconds - lo.nanoseconds)
            return .nanoseconds(lo.nanoseconds + Int64(span * random.nextUnit()))
        case .logNormal(let median, let p95):
            let m = Double(max(1, median.nanoseconds))
            let mu = log(m)
            // 1.6448536 is the standard normal's 95th percentile.
            let sigma = max(0, log(Double(max(1, p95.nanoseconds)) / m) / 1.644_853_6)
            return .nanoseconds(Int64(min(9e18, exp(mu + sigma * random.nextGaussian()))))
        }
    }

    public var description: String {
        switch self {
        case .fixed(let d): "fixed=\(SimulationDuration.format(d))"
        case .uniform(let lo, let hi): "min=\(SimulationDuration.format(lo)),max=\(SimulationDuration.format(hi))"
        case .logNormal(let median, let p95):
            "median=\(SimulationDuration.format(median)),p95=\(SimulationDuration.format(p95))"
        }
    }

    /// An error in a latency description.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses `fixed=D`, `min=D,max=D` or `median=D,p95=D`.
    public static func parse(_ text: String) throws(ParseError) -> LatencyDistribution {
        var values: [String: Duration] = [:]
        for setting in text.split(separator: ",") {
            let kv = setting.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, ["fixed", "min", "max", "median", "p95"].contains(kv[0]) else {
                throw ParseError(description: "latency setting '\(setting)': "
                                 + "use fixed=D, min=D,max=D or median=D,p95=D")
            }
            guard let d = SimulationDuration.parse(kv[1]) else {
                throw ParseError(description: "\(kv[0])=\(kv[1]): give a duration such as 150ms or 1.5s")
            }
            values[kv[0]] = d
        }
        if let d = values["fixed"], values.count == 1 { return .fixed(d) }
        if let lo = values["min"], let hi = values["max"], values.count == 2, lo <= hi { return .uniform(lo, hi) }
        if let m = values["median"], values.count <= 2, values["fixed"] == nil, values["min"] == nil,
           values["max"] == nil {
            let p95 = values["p95"] ?? m
            guard p95 >= m else { throw ParseError(description: "p95 must not be below the median") }
            return .logNormal(median: m, p95: p95)
        }
        throw ParseError(description: "latency '\(text)': use fixed=D, min=D,max=D (min ≤ max) or median=D,p95=D")
    }
}
