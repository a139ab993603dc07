// How one host's access link treats datagrams: a one-way delay with jitter, loss, reordering,
// duplication and a bandwidth limit (the impairment vocabulary of `--impair`, from `--link`),
// each drawn from the network's seeded generator. A datagram
// crosses the sender's link and the receiver's link; the core between them adds nothing.
import ZoneCore

/// The behaviour of a host's link to the rest of the virtual network, in each direction. Its
/// settings are the impairment vocabulary's (`ImpairmentSpec`, ZoneCore), and so is its text form.
public struct LinkProfile: Hashable, Sendable, CustomStringConvertible {
    /// One-way delay.
    public var delay: Duration
    /// Extra delay drawn uniformly from 0…`jitter` for each datagram (so jitter reorders too).
    public var jitter: Duration
    /// Probability that a datagram is lost on this link.
    public var loss: Double
    /// Probability that a datagram is held back by `reorderGap`, arriving after later ones.
    public var reorder: Double
    /// How long a reordered datagram is held back.
    public var reorderGap: Duration
    /// Probability that a datagram arrives twice.
    public var duplicate: Double
    /// The link's rate in bits per second (serialization delay and queueing); nil for unlimited.
    public var bitsPerSecond: Int?

    public init(delay: Duration = .milliseconds(20), jitter: Duration = .milliseconds(5), loss: Double = 0,
                reorder: Double = 0, reorderGap: Duration = .milliseconds(30), duplicate: Double = 0,
                bitsPerSecond: Int? = nil) {
        self.delay = delay
        self.jitter = jitter
        self.loss = loss
        self.reorder = reorder
        self.reorderGap = reorderGap
        self.duplicate = duplicate
        self.bitsPerSecond = bitsPerSecond
    }

    /// The link an impairment spec describes (its seed is not used: links draw from the
    /// network's generator).
    public init(_ spec: ImpairmentSpec) {
        self.init(delay: spec.delay, jitter: spec.jitter, loss: spec.loss, reorder: spec.reorder,
                  reorderGap: spec.reorderGap, duplicate: spec.duplicate, bitsPerSecond: spec.bitsPerSecond)
    }

    /// The link as an impairment spec.
    public var spec: ImpairmentSpec {
        ImpairmentSpec(loss: loss, delay: delay, jitter: jitter, reorder: reorder, reorderGap: reorderGap,
                       duplicate: duplicate, bitsPerSecond: bitsPerSecond)
    }

    /// A home broadband link: 20 ms each way, 5 ms of jitter, nothing lost.
    public static let broadband = LinkProfile()

    /// A data-centre link (the relay's): 2 ms, no jitter.
    public static let datacenter = LinkProfile(delay: .milliseconds(2), jitter: .zero)

    /// A link that takes no time and loses nothing (unit tests).
    public static let ideal = LinkProfile(delay: .zero, jitter: .zero)

    /// The settings `--link` takes: the impairment vocabulary without `seed` (the simulator's
    /// `--seed` decides every draw).
    public static let keys: [ImpairmentSpec.Key] = [.delay, .jitter, .loss, .reorder, .reorderGap, .duplicate,
                                                     .bandwidth]

    /// An error in a link description, with what to write instead.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses `broadband`, `datacenter`, `ideal`, or `key=value,…` over `broadband` with the
    /// impairment vocabulary: `delay`, `jitter`, `reorder-gap` (durations: `20ms`, `1.5s`), `loss`,
    /// `reorder`, `duplicate` (probabilities: 0.1 or 10%), `bandwidth` (`10mbit`, `512kbit`, `1gbit`,
    /// or bits/s). `latency` and `reorder-delay` are accepted for `delay` and `reorder-gap`.
    public static func parse(_ text: String) throws(ParseError) -> LinkProfile {
        switch text {
        case "broadband": return .broadband
        case "datacenter": return .datacenter
        case "ideal": return .ideal
        default: break
        }
        do {
            return LinkProfile(try ImpairmentSpec(parsing: text, over: LinkProfile.broadband.spec, keys: keys))
        } catch {
            throw ParseError(description: "link \(error.description.dropFirst("impairment ".count))")
        }
    }

    public var description: String {
        var parts = ["delay=\(SimulationDuration.format(delay))", "jitter=\(SimulationDuration.format(jitter))"]
        if loss > 0 { parts.append("loss=\(loss)") }
        if reorder > 0 { parts.append("reorder=\(reorder)") }
        if duplicate > 0 { parts.append("duplicate=\(duplicate)") }
        if let bitsPerSecond { parts.append("bandwidth=\(bitsPerSecond)bit") }
        return parts.joined(separator: ",")
    }
}

/// Durations as the simulator's flags write them: `250us`, `20ms`, `2s`, `1.5s`, `2m`.
public enum SimulationDuration {
    public static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("us", 1e3), ("ms", 1e6), ("ns", 1), ("s", 1e9), ("m", 60e9)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let v = Double(text.dropLast(suffix.count)), v >= 0, v.isFinite, v * scale < 9e18 {
                return .nanoseconds(Int64(v * scale))
            }
        }
        return nil
    }

    /// The shortest exact form: `20ms`, `2s`, `1.5s`, `250us`.
    public static func format(_ d: Duration) -> String {
        let ns = d.nanoseconds
        if ns == 0 { return "0s" }
        if ns % 1_000_000_000 == 0 { return "\(ns / 1_000_000_000)s" }
        if ns % 1_000_000 == 0 {
            return ns >= 1_000_000_000 ? "\(Double(ns) / 1e9)s" : "\(ns / 1_000_000)ms"
        }
        if ns % 1000 == 0 { return "\(ns / 1000)us" }
        return "\(ns)ns"
    }
}
