// Base 16 (RFC 4648 §8): the one hex codec of the project. Digits are written lowercase, as STUN
// transaction IDs, SDP fingerprints' canonical form (RFC 8122 §5 allows either case), H.264
// profile-level-ids, TURN nonces and record names print them; either case is read.

/// Hex digits to and from bytes and integers.
public enum Hex {
    /// The lowercase digit of the low four bits of `nibble`.
    @inlinable
    public static func digit(_ nibble: UInt8) -> UInt8 {
        let value = nibble & 15
        return value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &- 10 &+ value
    }

    /// Whether `text` is exactly `digits` lowercase hex digits: the form of the identifiers and secrets this
    /// project makes, checked before a remote's copy is used.
    public static func isLowercase(_ text: String, digits: Int) -> Bool {
        text.utf8.count == digits
            && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                                      || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// The value (0–15) of a hex digit in either case; nil for any other byte.
    @inlinable
    public static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// `bytes` as two digits each (lowercase unless `uppercase`), `separator` (if any) between
    /// bytes: `ab:cd`, as a fingerprint is written.
    public static func encode<Bytes: Sequence<UInt8>>(
        _ bytes: Bytes, separator: UInt8? = nil, uppercase: Bool = false
    ) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * (separator == nil ? 2 : 3))
        // Uppercase letters are the lowercase ones less 0x20; digits have no case.
        func cased(_ digit: UInt8) -> UInt8 { uppercase && digit >= UInt8(ascii: "a") ? digit - 0x20 : digit }
        for byte in bytes {
            if let separator, !text.isEmpty { text.append(separator) }
            text.append(cased(digit(byte >> 4)))
            text.append(cased(digit(byte)))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `value` in lowercase digits without leading zeros (`String(value, radix: 16)`), left-padded
    /// with zeros to `digits`.
    @inlinable
    public static func string<T: FixedWidthInteger & UnsignedInteger>(_ value: T, digits: Int = 1) -> String {
        let count = digitCount(value, atLeast: digits)
        return String(unsafeUninitializedCapacity: count) { out in
            var rest = value
            for index in stride(from: count - 1, through: 0, by: -1) {
                out[index] = digit(UInt8(truncatingIfNeeded: rest))
                rest >>= 4
            }
            return count
        }
    }

    /// Appends the digits of `value` as `string(value, digits:)` writes them to `text`.
    @inlinable
    public static func append<T: FixedWidthInteger & UnsignedInteger>(
        _ value: T, digits: Int = 1, to text: inout [UInt8]
    ) {
        let count = digitCount(value, atLeast: digits)
        for index in stride(from: count - 1, through: 0, by: -1) {
            // Past the value's own width the digits are the padding's zeros.
            text.append(index * 4 < T.bitWidth ? digit(UInt8(truncatingIfNeeded: value >> (index * 4))) : digit(0))
        }
    }

    /// How many digits `value` has without leading zeros, at least `minimum`.
    @inlinable
    static func digitCount<T: FixedWidthInteger>(_ value: T, atLeast minimum: Int) -> Int {
        Swift.max(minimum, 1, (T.bitWidth - value.leadingZeroBitCount + 3) / 4)
    }

    /// The bytes that `text` spells as pairs of digits (either case, no separators); nil when a byte
    /// is not a digit or a digit is left over.
    public static func decode<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        var decoder = HexDecoder()
        guard decoder.append(text) else { return nil }
        return decoder.finish()
    }

    /// The number spelled by 1 to `T.bitWidth / 4` digits (either case); nil when `text` is empty,
    /// longer than that, or holds a byte that is not a digit. It cannot overflow.
    @inlinable
    public static func integer<T: FixedWidthInteger & UnsignedInteger, Text: Collection<UInt8>>(
        _ text: Text, as type: T.Type = T.self
    ) -> T? {
        guard !text.isEmpty, text.count <= T.bitWidth / 4 else { return nil }
        var result: T = 0
        for byte in text {
            guard let nibble = value(byte) else { return nil }
            result = result << 4 | T(nibble)
        }
        return result
    }
}

/// Hex text to bytes, fed in pieces however the text was cut: a digit pair split between two
/// pieces is joined. The whole-text form is `Hex.decode`.
public struct HexDecoder: Sendable {
    /// The bytes decoded so far.
    public private(set) var bytes: [UInt8] = []
    /// The first digit of a pair whose second has not arrived.
    private var pendingHigh: UInt8?
    /// Set once a byte that is not a digit was fed: the text is not hex, whatever follows.
    public private(set) var failed = false

    public init() {}

    /// Feeds the next piece of text; false (and from then on) once a byte is not a hex digit.
    @discardableResult
    public mutating func append<Text: Collection<UInt8>>(_ text: Text) -> Bool {
        guard !failed else { return false }
        for byte in text {
            guard let nibble = Hex.value(byte) else {
                failed = true
                return false
            }
            if let high = pendingHigh {
                bytes.append(high << 4 | nibble)
                pendingHigh = nil
            } else {
                pendingHigh = nibble
            }
        }
        return true
    }

    /// The bytes of the whole text; nil when a byte was not a digit or the last pair is incomplete.
    public func finish() -> [UInt8]? {
        failed || pendingHigh != nil ? nil : bytes
    }
}
