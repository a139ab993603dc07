import Foundation

/// A deterministic random number generator (xoshiro256**), seeded through SplitMix64.
///
/// Every random choice in ZoneRTC comes from one of these, so a seed reproduces a run exactly.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    public init(seed: UInt64) {
        var sm = SplitMix64(state: seed)
        s0 = sm.next(); s1 = sm.next(); s2 = sm.next(); s3 = sm.next()
    }

    @inline(__always)
    public mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    /// A uniform double in [0, 1).
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        p > 0 && nextUnit() < p
    }

    /// A standard normal deviate (Box–Muller).
    public mutating func nextGaussian() -> Double {
        var u1 = nextUnit()
        while u1 <= .leastNormalMagnitude { u1 = nextUnit() }
        let u2 = nextUnit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// Two draws as 32 lowercase hex digits, each zero-padded to 16 (chunk UUIDs, media IDs).
    public mutating func hex128() -> String {
        let words = (next(), next())
        return String(unsafeUninitializedCapacity: 32) { out in
            for i in 0..<16 {
                let shift = UInt64(60 - 4 * i)
                out[i] = Hex.digit(UInt8(truncatingIfNeeded: words.0 >> shift))
                out[16 + i] = Hex.digit(UInt8(truncatingIfNeeded: words.1 >> shift))
            }
            return 32
        }
    }

    /// A generator for an independent stream, derived from this one (for sub-components).
    public mutating func fork() -> SeededRandom {
        SeededRandom(seed: next())
    }

    @inline(__always)
    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}

/// SplitMix64: expands a 64-bit seed into well-mixed state words.
public struct SplitMix64: Sendable {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
