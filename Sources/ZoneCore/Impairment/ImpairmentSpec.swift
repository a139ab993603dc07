// The text form of a network impairment, as `--impair` takes it:
// `loss=0.1,delay=20ms,jitter=5ms,reorder=0.05,duplicate=0.01,seed=1`. Probabilities are
// fractions (0.1) or percentages (10%); durations carry a unit (ns, us, ms, s).

/// What an `Impairment` does to datagrams: drop, delay, jitter, reorder, duplicate.
public struct ImpairmentSpec: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The probability a datagram is dropped.
    public var loss: Double
    /// The delay every datagram gets.
    public var delay: Duration
    /// Each datagram's delay varies uniformly within ±jitter around `delay` (never below zero),
    /// so datagrams closer together than the jitter may arrive out of order.
    public var jitter: Duration
    /// The probability a datagram is held back by an extra `reorderGap`, letting later ones pass.
    public var reorder: Double
    public var reorderGap: Duration
    /// The probability a datagram is delivered twice (each copy with its own delay).
    public var duplicate: Double
    /// The seed of the random choices: the same seed and inputs give the same outputs.
    public var seed: UInt64

    public static let keys = ["loss", "delay", "jitter", "reorder", "reorder-gap", "duplicate", "seed"]

    public init(loss: Double = 0, delay: Duration = .zero, jitter: Duration = .zero, reorder: Double = 0,
                reorderGap: Duration = .milliseconds(10), duplicate: Double = 0, seed: UInt64 = 1) {
        self.loss = loss
        self.delay = delay
        self.jitter = jitter
        self.reorder = reorder
        self.reorderGap = reorderGap
        self.duplicate = duplicate
        self.seed = seed
    }

    /// Parses `key=value` pairs separated by commas (keys: loss, delay, jitter, reorder,
    /// reorder-gap, duplicate, seed).
    public init(parsing text: String) throws(ImpairmentSpecError) {
        self.init()
        let trimmed = text.trimmingCharacters(in: " ")
        guard !trimmed.isEmpty else {
            throw ImpairmentSpecError(text, "it is empty; give key=value pairs such as loss=0.1,delay=20ms")
        }
        var seen = Set<String>()
        for item in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pair[0].trimmingCharacters(in: " ")
            guard pair.count == 2 else {
                throw ImpairmentSpecError(text, "'\(item)' is not key=value")
            }
            let value = pair[1].trimmingCharacters(in: " ")
            guard Self.keys.contains(key) else {
                throw ImpairmentSpecError(text, "unknown key '\(key)' (keys: \(Self.keys.joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw ImpairmentSpecError(text, "'\(key)' is given twice") }
            switch key {
            case "loss": loss = try Self.probability(value, key, text)
            case "reorder": reorder = try Self.probability(value, key, text)
            case "duplicate": duplicate = try Self.probability(value, key, text)
            case "delay": delay = try Self.duration(value, key, text)
            case "jitter": jitter = try Self.duration(value, key, text)
            case "reorder-gap": reorderGap = try Self.duration(value, key, text)
            default:
                guard let seed = UInt64(value) else {
                    throw ImpairmentSpecError(text, "seed '\(value)' is not a whole number from 0 to 2^64-1")
                }
                self.seed = seed
            }
        }
    }

    private static func probability(_ value: String, _ key: String, _ text: String) throws(ImpairmentSpecError)
        -> Double {
        let percent = value.hasSuffix("%")
        guard let number = Double(percent ? String(value.dropLast()) : value), number.isFinite else {
            throw ImpairmentSpecError(text, "\(key) '\(value)' is not a number (examples: 0.1, 10%)")
        }
        let p = percent ? number / 100 : number
        guard (0...1).contains(p) else {
            throw ImpairmentSpecError(text, "\(key) \(value) is not a probability between 0 and 1 (or 0% and 100%)")
        }
        return p
    }

    private static func duration(_ value: String, _ key: String, _ text: String) throws(ImpairmentSpecError)
        -> Duration {
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        for (suffix, scale) in units where value.hasSuffix(suffix) {
            let number = value.dropLast(suffix.count)
            guard let v = Double(number), v.isFinite else { break }
            guard v >= 0 else { throw ImpairmentSpecError(text, "\(key) \(value) is negative") }
            guard v * scale < 3.6e12 else { throw ImpairmentSpecError(text, "\(key) \(value) is over an hour") }
            return .nanoseconds(Int64(v * scale))
        }
        throw ImpairmentSpecError(text, "\(key) '\(value)' is not a duration with a unit (examples: 20ms, 500us, 1s)")
    }

    /// Whether the spec changes nothing.
    public var isNeutral: Bool {
        loss == 0 && delay == .zero && jitter == .zero && reorder == 0 && duplicate == 0
    }

    /// The canonical text form (parses back to the same spec).
    public var description: String {
        func d(_ x: Duration) -> String {
            let ns = x.nanoseconds
            if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
            if ns % 1000 == 0 { return "\(ns / 1000)us" }
            return "\(ns)ns"
        }
        return "loss=\(loss),delay=\(d(delay)),jitter=\(d(jitter)),reorder=\(reorder),"
            + "reorder-gap=\(d(reorderGap)),duplicate=\(duplicate),seed=\(seed)"
    }
}

/// An impairment spec that does not parse, and why.
public struct ImpairmentSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    public var input: String
    public var reason: String

    public init(_ input: String, _ reason: String) {
        self.input = input
        self.reason = reason
    }

    public var description: String { "impairment '\(input)': \(reason)" }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
