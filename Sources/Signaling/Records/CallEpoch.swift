// Call epochs, spec §3: one negotiation attempt (one offer, one answer, one ICE generation —
// a new epoch is an ICE restart, RFC 8445 §9), numbered in milliseconds since 1970 and made
// strictly increasing on each device.
import ZoneCore

/// One negotiation attempt of a call, named by a millisecond timestamp.
public struct CallEpoch: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch on the device that started the epoch.
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (lhs: CallEpoch, rhs: CallEpoch) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public var description: String { String(milliseconds) }
}

/// Issues call epochs that only grow on this device: `max(now_ms, last + 1)` (spec §3).
///
/// `last` is the highest epoch issued *or observed* (in a `SignalSession`, an offer, a
/// conflict's server record), so an epoch this device starts beats every epoch it knows of —
/// after the device clock steps backwards, and against a peer whose clock runs ahead. Keep one
/// per device across calls, and seed it from the `SignalSession` record when a process starts.
public struct EpochClock: Hashable, Sendable {
    /// The highest epoch issued or observed so far.
    public private(set) var last: CallEpoch?

    public init(last: CallEpoch? = nil) { self.last = last }

    /// A new epoch: the current millisecond, or one more than `last` if that is not higher.
    public mutating func next(now: Instant) -> CallEpoch {
        var ms = now.millisecondsSinceEpoch
        // Saturating: `last` may come from a record the other user wrote (the inbox refuses epochs
        // far ahead of now, but a device must not trap on any value it observed).
        if let last, last.milliseconds >= ms { ms = last.milliseconds == .max ? .max : last.milliseconds + 1 }
        let epoch = CallEpoch(milliseconds: ms)
        last = epoch
        return epoch
    }

    /// Remembers an epoch seen elsewhere, so the next one issued is higher.
    public mutating func observe(_ epoch: CallEpoch) {
        if last.map({ epoch > $0 }) ?? true { last = epoch }
    }
}
