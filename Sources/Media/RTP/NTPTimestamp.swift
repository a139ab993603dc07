// NTP timestamps as RTCP carries them (RFC 3550 §4): 64 bits, seconds since 1900-01-01 in the
// high word and a binary fraction in the low word; the "compact" form is the middle 32 bits
// (16.16 seconds), which receivers echo as LSR and in whose units DLSR counts (§6.4.1). The
// round-trip time a sender derives from a report block is A − LSR − DLSR, A being the compact
// NTP time the report arrived.

import ZoneCore

/// Conversions between `Instant` (Unix nanoseconds) and NTP time.
public enum NTPTimestamp {
    /// Seconds from 1900-01-01 (NTP era 0) to 1970-01-01 (the Unix epoch).
    public static let unixEpochOffset: Int64 = 2_208_988_800

    /// The 64-bit NTP timestamp of `instant`.
    public static func from(_ instant: Instant) -> UInt64 {
        let ns = instant.nanosecondsSinceEpoch
        let seconds = ns >= 0 ? ns / 1_000_000_000 : (ns - 999_999_999) / 1_000_000_000
        let rest = UInt64(ns - seconds * 1_000_000_000)
        let fraction = (rest << 32) / 1_000_000_000
        return UInt64(truncatingIfNeeded: seconds + unixEpochOffset) << 32 | fraction
    }

    /// The instant of a 64-bit NTP timestamp (era 0, i.e. before 2036, or just after the wrap).
    public static func instant(_ ntp: UInt64) -> Instant {
        let seconds = Int64(ntp >> 32) - unixEpochOffset
        let ns = Int64(((ntp & 0xFFFF_FFFF) * 1_000_000_000) >> 32)
        return Instant(nanosecondsSinceEpoch: seconds * 1_000_000_000 + ns)
    }

    /// The middle 32 bits of `instant`'s NTP timestamp.
    public static func compact(_ instant: Instant) -> UInt32 {
        UInt32(truncatingIfNeeded: from(instant) >> 16)
    }

    /// A duration in compact units (1/65536 s), as DLSR carries it; saturates at 2^32 − 1.
    public static func compactUnits(_ duration: Duration) -> UInt32 {
        let ns = max(0, duration.nanoseconds)
        return UInt32(clamping: (ns / 1000) * 65536 / 1_000_000)
    }

    /// The duration of `units` compact units.
    public static func duration(compactUnits units: UInt32) -> Duration {
        .nanoseconds(Int64(units) * 1_000_000_000 / 65536)
    }

    /// The round trip a report block describes, arriving at `now`: nil when the block echoes
    /// no sender report (LSR 0) or the result is negative (clock trouble).
    public static func roundTripTime(now: Instant, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32)
        -> Duration? {
        guard lastSenderReport != 0 else { return nil }
        let rtt = Int32(bitPattern: compact(now) &- lastSenderReport &- delaySinceLastSenderReport)
        guard rtt >= 0 else { return nil }
        return duration(compactUnits: UInt32(rtt))
    }
}
