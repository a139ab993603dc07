// How one host's access link treats datagrams: a one-way delay with jitter, loss, reordering,
// duplication and a bandwidth limit, each drawn from the network's seeded generator. A datagram
// crosses the sender's link and the receiver's link; the core between them adds nothing.
import ZoneCore

/// The behaviour of a host's link to the rest of the virtual network, in each direction.
public struct LinkProfile: Hashable, Sendable, CustomStringConvertible {
    /// One-way delay.
    public var latency: Duration
    /// Extra delay drawn uniformly from 0…`jitter` for each datagram (so jitter reorders too).
    public var jitter: Duration
    /// Probability that a datagram is lost on this link.
    public var loss: Double
    /// Probability that a datagram is held back by `reorderDelay`, arriving after later ones.
    public var reordering: Double
    /// How long a reordered datagram is held back.
    public var reorderDelay: Duration
    /// Probability that a datagram arrives twice.
    public var duplication: Double
    /// The link's rate in bits per second (serialization delay and queueing); nil for unlimited.
    public var bitsPerSecond: Int?

    public init(latency: Duration = .milliseconds(20), jitter: Duration = .milliseconds(5), loss: Double = 0,
                reordering: Double = 0, reorderDelay: Duration = .milliseconds(30), duplication: Double = 0,
                bitsPerSecond: Int? = nil) {
        self.latency = latency
        self.jitter = jitter
        self.loss = loss
        self.reordering = reordering
        self.reorderDelay = reorderDelay
        self.duplication = duplication
        self.bitsPerSecond = bitsPerSecond
    }

    /// A home broadband link: 20 ms each way, 5 ms of jitter, nothing lost.
    public static let broadband = LinkProfile()

    /// A data-centre link (the relay's): 2 ms, no jitter.
    public static let datacenter = LinkProfile(latency: .milliseconds(2), jitter: .zero)

    /// A link that takes no time and loses nothing (unit tests).
    public static let ideal = LinkProfile(latency: .zero, jitter: .zero)

    /// An error in a link description, with what to write instead.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses `broadband`, `datacenter`, `ideal`, or `key=value,…` over `broadband`. Keys:
    /// `latency`, `jitter`, `reorder-delay` (durations: `20ms`, `1.5s`), `loss`, `reorder`,
    /// `duplicate` (probabilities 0…1), `bandwidth` (`10mbit`, `512kbit`, `1gbit`, or bits/s).
    public static func parse(_ text: String) throws(ParseError) -> LinkProfile {
        switch text {
        case "broadband": return .broadband
        case "datacenter": return .datacenter
        case "ideal": return .ideal
        default: break
        }
        var link = LinkProfile.broadband
        for setting in text.split(separator: ",") {
            let kv = setting.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else {
                throw ParseError(description: "link setting '\(setting)' is not key=value "
                                 + "(latency, jitter, loss, reorder, reorder-delay, duplicate, bandwidth)")
            }
            switch kv[0] {
            case "latency": link.latency = try duration(kv[1], kv[0])
            case "jitter": link.jitter = try duration(kv[1], kv[0])
            case "reorder-delay": link.reorderDelay = try duration(kv[1], kv[0])
            case "loss": link.loss = try probability(kv[1], kv[0])
            case "reorder": link.reordering = try probability(kv[1], kv[0])
            case "duplicate": link.duplication = try probability(kv[1], kv[0])
            case "bandwidth": link.bitsPerSecond = try bandwidth(kv[1])
            default:
                throw ParseError(description: "unknown link setting '\(kv[0])' "
                                 + "(latency, jitter, loss, reorder, reorder-delay, duplicate, bandwidth)")
            }
        }
        return link
    }

    static func duration(_ text: String, _ key: String) throws(ParseError) -> Duration {
        guard let d = SimulationDuration.parse(text) else {
            throw ParseError(description: "\(key)=\(text): give a duration such as 20ms or 1.5s")
        }
        return d
    }

    static func probability(_ text: String, _ key: String) throws(ParseError) -> Double {
        guard let p = Double(text), p >= 0, p <= 1 else {
            throw ParseError(description: "\(key)=\(text): give a probability from 0 to 1")
        }
        return p
    }

    static func bandwidth(_ text: String) throws(ParseError) -> Int {
        let units: [(String, Double)] = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1)]
        for (suffix, scale) in units where text.lowercased().hasSuffix(suffix) {
            if let v = Double(text.dropLast(suffix.count)), v > 0, v * scale <= 1e12 { return Int(v * scale) }
        }
        if let v = Int(text), v > 0 { return v }
        throw ParseError(description: "bandwidth=\(text): give a rate such as 10mbit, 512kbit or 1gbit")
    }

    public var description: String {
        var parts = ["latency=\(SimulationDuration.format(latency))", "jitter=\(SimulationDuration.format(jitter))"]
        if loss > 0 { parts.append("loss=\(loss)") }
        if reordering > 0 { parts.append("reorder=\(reordering)") }
        if duplication > 0 { parts.append("duplicate=\(duplication)") }
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
