// The one impairment vocabulary of ZoneRTC, as `--impair` (zonertc peer, media send, call) and
// `--link` (zonertc sim converge) take it: `delay=20ms,jitter=5ms,loss=0.1,reorder=0.05,
// reorder-gap=10ms,duplicate=0.01,seed=1` (and `bandwidth=10mbit` for a simulated link).
// Probabilities are fractions (0.1) or percentages (10%); durations carry a unit (ns, us, ms, s,
// m). The simulator's first spellings, `latency` and `reorder-delay`, are accepted as aliases of
// `delay` and `reorder-gap` so that existing command lines keep working.

/// What an impairment does to datagrams: drop, delay, jitter, reorder, duplicate (and, on a
/// simulated link, limit the rate). `Impairment` (the real driver's stage) and the simulator's
/// `LinkProfile` are both made from one; each says how it draws jitter.
public struct ImpairmentSpec: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The probability a datagram is dropped.
    public var loss: Double
    /// The delay every datagram gets.
    public var delay: Duration
    /// How much each datagram's delay varies: `Impairment` draws it uniformly within ±jitter
    /// around `delay` (never below zero); a simulated link adds 0…jitter. Either way datagrams
    /// closer together than the jitter may arrive out of order.
    public var jitter: Duration
    /// The probability a datagram is held back by an extra `reorderGap`, letting later ones pass.
    public var reorder: Double
    public var reorderGap: Duration
    /// The probability a datagram is delivered twice (each copy with its own delay).
    public var duplicate: Double
    /// The seed of the random choices: the same seed and inputs give the same outputs.
    public var seed: UInt64

    /// A rate limit in bits per second, nil for none (`bandwidth`; only simulated links model it).
    public var bitsPerSecond: Int?

    /// The settings of the text form.
    public enum Key: String, CaseIterable, Sendable {
        case loss, delay, jitter, reorder, reorderGap = "reorder-gap", duplicate, seed, bandwidth

        /// Other spellings accepted for the same setting.
        public var aliases: [String] {
            switch self {
            case .delay: ["latency"]
            case .reorderGap: ["reorder-delay"]
            case .loss, .jitter, .reorder, .duplicate, .seed, .bandwidth: []
            }
        }

        /// The key `name` spells, canonical or alias.
        public init?(spelling name: String) {
            guard let key = Key.allCases.first(where: { $0.rawValue == name || $0.aliases.contains(name) }) else {
                return nil
            }
            self = key
        }
    }

    /// What `--impair` takes: everything but `bandwidth`, which the user-space stage does not model.
    public static let impairKeys: [Key] = [.loss, .delay, .jitter, .reorder, .reorderGap, .duplicate, .seed]

    /// The canonical key names `--impair` takes.
    public static let keys = impairKeys.map(\.rawValue)

    public init(loss: Double = 0, delay: Duration = .zero, jitter: Duration = .zero, reorder: Double = 0,
                reorderGap: Duration = .milliseconds(10), duplicate: Double = 0, seed: UInt64 = 1,
                bitsPerSecond: Int? = nil) {
        self.loss = loss
        self.delay = delay
        self.jitter = jitter
        self.reorder = reorder
        self.reorderGap = reorderGap
        self.duplicate = duplicate
        self.seed = seed
        self.bitsPerSecond = bitsPerSecond
    }

    /// Parses `key=value` pairs separated by commas, as `--impair` takes them.
    public init(parsing text: String) throws(ImpairmentSpecError) {
        try self.init(parsing: text, over: ImpairmentSpec(), keys: Self.impairKeys)
    }

    /// Parses `key=value` pairs separated by commas over `base`: settings not given keep its
    /// values. Only `keys` are accepted (in any spelling); an error names the canonical ones.
    public init(parsing text: String, over base: ImpairmentSpec, keys: [Key]) throws(ImpairmentSpecError) {
        self = base
        let names = keys.map(\.rawValue).joined(separator: ", ")
        let trimmed = text.trimmingCharacters(in: " ")
        guard !trimmed.isEmpty else {
            throw ImpairmentSpecError(text, "it is empty; give key=value pairs such as loss=0.1,delay=20ms")
        }
        var seen = Set<Key>()
        for item in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pair[0].trimmingCharacters(in: " ")
            guard pair.count == 2 else {
                throw ImpairmentSpecError(text, "'\(item)' is not key=value")
            }
            let value = pair[1].trimmingCharacters(in: " ")
            guard let key = Key(spelling: name), keys.contains(key) else {
                throw ImpairmentSpecError(text, "unknown key '\(name)' (keys: \(names))")
            }
            guard seen.insert(key).inserted else { throw ImpairmentSpecError(text, "'\(name)' is given twice") }
            switch key {
            case .loss: loss = try Self.probability(value, name, text)
            case .reorder: reorder = try Self.probability(value, name, text)
            case .duplicate: duplicate = try Self.probability(value, name, text)
            case .delay: delay = try Self.duration(value, name, text)
            case .jitter: jitter = try Self.duration(value, name, text)
            case .reorderGap: reorderGap = try Self.duration(value, name, text)
            case .bandwidth: bitsPerSecond = try Self.bandwidth(value, text)
            case .seed:
                guard let seed = UInt64(value) else {
                    throw ImpairmentSpecError(text, "seed '\(value)' is not a whole number from 0 to 2^64-1")
                }
                self.seed = seed
            }
        }
    }

    private static func bandwidth(_ value: String, _ text: String) throws(ImpairmentSpecError) -> Int {
        let units: [(String, Double)] = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1)]
        for (suffix, scale) in units where value.lowercased().hasSuffix(suffix) {
            if let v = Double(value.dropLast(suffix.count)), v > 0, v * scale <= 1e12 { return Int(v * scale) }
        }
        if let v = Int(value), v > 0, v <= 1_000_000_000_000 { return v }
        throw ImpairmentSpecError(text, "bandwidth '\(value)' is not a rate such as 10mbit, 512kbit or 1gbit")
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
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9)]
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
        loss == 0 && delay == .zero && jitter == .zero && reorder == 0 && duplicate == 0 && bitsPerSecond == nil
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
            + (bitsPerSecond.map { ",bandwidth=\($0)bit" } ?? "")
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
