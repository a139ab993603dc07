// The 96-bit transaction ID: RFC 8489 §5 and §6.
//
// "The transaction ID MUST be uniformly and randomly chosen from the interval 0 .. 2**96-1, and
// MUST be cryptographically random" (§5). Randomness comes from the caller's generator: a
// `SeededRandom` in tests and the simulator, `SystemRandomNumberGenerator` on the real network.

import ZoneCore

/// The 12-byte transaction ID that pairs a response with its request.
public struct STUNTransactionID: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0–3 of the ID, big-endian.
    public var high: UInt32
    /// Bytes 4–11 of the ID, big-endian.
    public var low: UInt64

    /// The ID whose first four bytes are `high` and last eight are `low`, both big-endian.
    public init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The ID from exactly 12 bytes; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var high: UInt32 = 0
        var low: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 4 { high = high << 8 | UInt32(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// A uniformly random ID drawn from `generator`.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> STUNTransactionID {
        STUNTransactionID(high: UInt32(truncatingIfNeeded: generator.next()), low: generator.next())
    }

    /// A random ID from the system's cryptographic generator.
    public static func random() -> STUNTransactionID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// The 12 bytes as they appear on the wire.
    public var bytes: [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: high >> (24 - 8 * UInt32($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    public var description: String { Hex.string(high, digits: 8) + Hex.string(low, digits: 16) }
}
