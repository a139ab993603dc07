// Extending 16-bit RTP sequence numbers to 64 bits (RFC 3550 §A.1 keeps a cycle count; this
// follows the same idea): each new number is placed at the extended value closest to the
// highest one seen so far, so reordering across a wrap lands on the right side of it.

/// Turns wrapping 16-bit sequence numbers into monotone 64-bit extended ones.
public struct SequenceUnwrapper: Sendable {
    /// The highest extended sequence number seen, nil before the first.
    public private(set) var highest: UInt64?

    public init() {}

    /// The extended value of `sequence`: the one within ±2^15 of the highest seen so far. The
    /// first number maps to 2^16 + itself, so packets reordered before it stay positive.
    public mutating func unwrap(_ sequence: UInt16) -> UInt64 {
        guard let highest else {
            let first = (1 << 16) + UInt64(sequence)
            self.highest = first
            return first
        }
        let delta = Int64(Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: highest)))
        let value = UInt64(max(0, Int64(highest) + delta))
        if value > highest { self.highest = value }
        return value
    }

    /// The extended value `sequence` would get, without recording it.
    public func peek(_ sequence: UInt16) -> UInt64 {
        var copy = self
        return copy.unwrap(sequence)
    }
}
