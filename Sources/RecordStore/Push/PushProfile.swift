import Foundation
import ZoneCore

/// How silent pushes behave on the way to devices: late, lost, coalesced, throttled, bursty.
///
/// `cloudkit` follows developers' public measurements of CloudKit pushes (log-normal latency,
/// median ≈ 2 s, p95 ≈ 3.5 s). `lan` is sub-millisecond and lossless, for real-time tests.
public struct PushProfile: Sendable, Hashable, CustomStringConvertible {
    /// The delay between a committed change and its notification reaching a device.
    public enum Latency: Sendable, Hashable {
        case fixed(Duration)
        case uniform(Duration, Duration)
        /// Log-normal, given by its median and 95th percentile.
        case logNormal(median: Duration, p95: Duration)

        func sample(_ random: inout SeededRandom) -> Duration {
            switch self {
            case .fixed(let d):
                return d
            case .uniform(let lo, let hi):
                let span = Double(hi.nanoseconds - lo.nanoseconds)
                return .nanoseconds(lo.nanoseconds + Int64(span * random.nextUnit()))
            case .logNormal(let median, let p95):
                let mu = log(Double(max(1, median.nanoseconds)))
                let sigma = max(0, log(Double(max(1, p95.nanoseconds)) / Double(max(1, median.nanoseconds))) / 1.6448536)
                return .nanoseconds(Int64(exp(mu + sigma * random.nextGaussian())))
            }
        }
    }

    /// What happens to a push beyond the device's budget.
    public enum OverBudget: String, Sendable, Hashable {
        /// Held until the next window opens.
        case delay
        /// Never delivered.
        case drop
    }

    public var name: String
    public var latency: Latency
    /// Probability that a notification is lost entirely.
    public var dropProbability: Double
    /// At most one pending notification per device: a newer one replaces it.
    public var coalescing: Bool
    /// Pushes per device per `budgetWindow`; nil = unlimited.
    public var budget: Int?
    public var budgetWindow: Duration
    public var overBudget: OverBudget
    /// When set, deliveries leave in bursts at multiples of this quantum.
    public var burstQuantum: Duration?

    public init(name: String, latency: Latency, dropProbability: Double = 0, coalescing: Bool = true,
                budget: Int? = nil, budgetWindow: Duration = .seconds(60), overBudget: OverBudget = .delay,
                burstQuantum: Duration? = nil) {
        self.name = name
        self.latency = latency
        self.dropProbability = dropProbability
        self.coalescing = coalescing
        self.budget = budget
        self.budgetWindow = budgetWindow
        self.overBudget = overBudget
        self.burstQuantum = burstQuantum
    }

    /// Sub-millisecond, lossless, no budget: one machine, real time.
    public static let lan = PushProfile(name: "lan", latency: .uniform(.microseconds(50), .microseconds(400)),
                                        coalescing: false)

    /// CloudKit-like: log-normal latency (median 2 s, p95 3.5 s), coalescing, no loss unless
    /// asked (`drop=`), a budget of 60 pushes per device per minute (*configurable*; Apple
    /// publishes no figure for foreground apps).
    public static let cloudkit = PushProfile(name: "cloudkit",
                                             latency: .logNormal(median: .seconds(2), p95: .milliseconds(3500)),
                                             budget: 60, budgetWindow: .seconds(60))

    public static let named: [String: PushProfile] = ["lan": .lan, "cloudkit": .cloudkit]

    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses `lan`, `cloudkit`, or either followed by `:key=value,...` overrides, or
    /// `custom:key=value,...`. Keys: `median`, `p95` (log-normal), `fixed`, `min`/`max` (uniform),
    /// `drop` (0…1), `coalesce` (on/off), `budget` (`N/60s` or `off`), `over` (`delay`/`drop`),
    /// `burst` (a duration). Durations: `250us`, `20ms`, `2s`, `1.5s`.
    public static func parse(_ text: String) throws(ParseError) -> PushProfile {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        let base = parts.first ?? ""
        var profile: PushProfile
        switch base {
        case "lan": profile = .lan
        case "cloudkit": profile = .cloudkit
        case "custom": profile = PushProfile(name: "custom", latency: .fixed(.zero))
        default:
            throw ParseError(description: "unknown push profile '\(base)': use lan, cloudkit or custom:key=value,…")
        }
        guard parts.count == 2 else {
            if base == "custom" { throw ParseError(description: "a custom profile needs settings: custom:median=2s,p95=3.5s,…") }
            return profile
        }
        if base != "custom" { profile.name = text }
        var median: Duration?, p95: Duration?, lo: Duration?, hi: Duration?
        for setting in parts[1].split(separator: ",") {
            let kv = setting.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { throw ParseError(description: "push profile setting '\(setting)' is not key=value") }
            let (key, value) = (kv[0], kv[1])
            switch key {
            case "median": median = try parseDuration(value)
            case "p95": p95 = try parseDuration(value)
            case "fixed": profile.latency = .fixed(try parseDuration(value))
            case "min": lo = try parseDuration(value)
            case "max": hi = try parseDuration(value)
            case "drop":
                guard let p = Double(value), p >= 0, p <= 1 else {
                    throw ParseError(description: "drop=\(value): give a probability from 0 to 1")
                }
                profile.dropProbability = p
            case "coalesce":
                guard value == "on" || value == "off" else { throw ParseError(description: "coalesce=\(value): on or off") }
                profile.coalescing = value == "on"
            case "budget":
                if value == "off" { profile.budget = nil; continue }
                let b = value.split(separator: "/").map(String.init)
                guard b.count == 2, let n = Int(b[0]), n > 0 else {
                    throw ParseError(description: "budget=\(value): give N/window, e.g. 60/60s, or off")
                }
                profile.budget = n
                profile.budgetWindow = try parseDuration(b[1])
            case "over":
                guard let o = OverBudget(rawValue: value) else { throw ParseError(description: "over=\(value): delay or drop") }
                profile.overBudget = o
            case "burst":
                profile.burstQuantum = try parseDuration(value)
            default:
                throw ParseError(description: "unknown push profile setting '\(key)' "
                                 + "(median, p95, fixed, min, max, drop, coalesce, budget, over, burst)")
            }
        }
        if median != nil || p95 != nil {
            let m = median ?? .seconds(2)
            profile.latency = .logNormal(median: m, p95: p95 ?? m)
        }
        if lo != nil || hi != nil {
            let l = lo ?? .zero
            profile.latency = .uniform(l, hi ?? l)
        }
        return profile
    }

    /// Parses `250us`, `20ms`, `2s`, `1.5s`, `2m`.
    public static func parseDuration(_ text: String) throws(ParseError) -> Duration {
        let units: [(String, Double)] = [("us", 1e3), ("ms", 1e6), ("ns", 1), ("s", 1e9), ("m", 60e9)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let v = Double(text.dropLast(suffix.count)), v >= 0, v.isFinite, v * scale < 9e18 {
                return .nanoseconds(Int64(v * scale))
            }
        }
        throw ParseError(description: "'\(text)' is not a duration (examples: 250us, 20ms, 2s, 1.5s, 2m)")
    }

    public var description: String { name }
}
