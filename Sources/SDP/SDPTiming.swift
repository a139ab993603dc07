// Timing, `t=`, RFC 8866 §5.9; JSEP always writes `t=0 0` (RFC 8829 §5.2.1).

/// `t=<start-time> <stop-time>`, NTP seconds; `0 0` means a session without bounds.
public struct SDPTiming: Hashable, Sendable, CustomStringConvertible {
    /// When the session starts, in NTP seconds; 0 for "now".
    public var start: UInt64
    /// When it stops; 0 for "never".
    public var stop: UInt64

    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    /// `t=0 0`.
    public static let unbounded = SDPTiming()

    /// The value of the line, without `t=`.
    public var description: String { "\(start) \(stop)" }

    static func parse(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> SDPTiming {
        let parts = SDPGrammar.fields(value)
        guard parts.count == 2,
            let start = SDPGrammar.decimal(parts[0], as: UInt64.self),
            let stop = SDPGrammar.decimal(parts[1], as: UInt64.self)
        else {
            throw SDPLineFailure(.invalidTiming, "t= must be two decimal numbers, start and stop time")
        }
        return SDPTiming(start: start, stop: stop)
    }
}
