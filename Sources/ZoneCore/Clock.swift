import Foundation
import Synchronization

/// Where the current instant comes from. Drivers read it; protocol machines are handed it.
public protocol InstantSource: Sendable {
    /// The current instant.
    func now() -> Instant
}

/// The real-time clock (`CLOCK_REALTIME`), for daemons and the CLI.
public struct WallClock: InstantSource {
    public init() {}

    public func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Instant(nanosecondsSinceEpoch: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }
}

/// A monotonic stopwatch for measurements (`CLOCK_MONOTONIC`); never fed to protocol logic.
public struct Stopwatch: Sendable {
    private let start: UInt64

    public init() { start = Stopwatch.monotonicNanoseconds() }

    public var elapsed: Duration { .nanoseconds(Int64(Stopwatch.monotonicNanoseconds() - start)) }

    public static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// A clock that only moves when told to: tests and the simulator advance it by hand.
public final class ManualClock: InstantSource {
    private let current: Mutex<Instant>

    public init(start: Instant = .seconds(1_700_000_000)) {
        current = Mutex(start)
    }

    public func now() -> Instant { current.withLock { $0 } }

    /// Moves the clock forward (or, to test clock steps, backward) by `duration`.
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0 + duration }
    }

    /// Sets the clock to `instant`, which may lie in the past (a clock step backwards).
    public func set(to instant: Instant) {
        current.withLock { $0 = instant }
    }
}
