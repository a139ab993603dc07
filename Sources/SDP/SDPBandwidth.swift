// Bandwidth, `b=`, RFC 8866 §5.8 (`CT`, `AS`) and RFC 3890 (`TIAS`).

/// `b=<bwtype>:<bandwidth>`: a limit in kilobits per second (`AS`, `CT`) or bits per second
/// (`TIAS`). Chrome and Firefox accept `b=AS` in a media section as a send limit.
public struct SDPBandwidth: Hashable, Sendable, CustomStringConvertible {
    /// `AS`, `CT`, `TIAS` or another token.
    public var type: String
    /// The number, in the unit `type` implies.
    public var value: UInt64

    public init(type: String, value: UInt64) {
        self.type = type
        self.value = value
    }

    /// The value of the line, without `b=`.
    public var description: String { "\(type):\(value)" }

    static func parse(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> SDPBandwidth {
        let (type, number) = SDPGrammar.splitOnce(value, at: SDPGrammar.colon)
        guard SDPGrammar.isToken(type), let number else {
            throw SDPLineFailure(.invalidBandwidth, "b= must be <type>:<number>")
        }
        guard let amount = SDPGrammar.decimal(number, as: UInt64.self) else {
            throw SDPLineFailure(.invalidBandwidth, "the bandwidth \(quote(number)) is not a decimal number")
        }
        return SDPBandwidth(type: SDPGrammar.string(type), value: amount)
    }
}
