// Faults the simulated store and push service suffer, at instants relative to the call's start:
// push outage windows (APNs delivers nothing), token expiry (every change token issued before
// the instant is refused with `changeTokenExpired`), and restarts (every request in the window
// fails with `serviceUnavailable` and a `retryAfter` for the rest of it; pushes waiting for
// delivery are lost). Random per-request errors (`requestRateLimited`, `serviceUnavailable`,
// `zoneBusy`) come from the engine's own `ThrottlePolicy`.
import ZoneCore

/// A window of simulated time, relative to the call's start.
public struct FaultWindow: Hashable, Sendable, CustomStringConvertible {
    public var start: Duration
    public var end: Duration

    public init(start: Duration, end: Duration) {
        self.start = start
        self.end = end
    }

    public func contains(_ offset: Duration) -> Bool { offset >= start && offset < end }

    public var description: String { "\(SimulationDuration.format(start))-\(SimulationDuration.format(end))" }

    /// Parses `START-END` (`2s-20s`) or `START+LENGTH` (`5s+3s`).
    public static func parse(_ text: String) -> FaultWindow? {
        if let plus = text.firstIndex(of: "+") {
            guard let s = SimulationDuration.parse(String(text[..<plus])),
                  let l = SimulationDuration.parse(String(text[text.index(after: plus)...])), l > .zero
            else { return nil }
            return FaultWindow(start: s, end: s + l)
        }
        let parts = text.split(separator: "-", maxSplits: 1).map(String.init)
        guard parts.count == 2, let s = SimulationDuration.parse(parts[0]), let e = SimulationDuration.parse(parts[1]),
              e > s
        else { return nil }
        return FaultWindow(start: s, end: e)
    }
}

/// The faults injected into one trial.
public struct StoreFaults: Hashable, Sendable {
    /// Windows in which the push service delivers nothing (notifications made then are lost).
    public var pushOutages: [FaultWindow] = []
    /// Instants at which every change token issued before expires.
    public var tokenExpiries: [Duration] = []
    /// Windows in which the store is restarting.
    public var restarts: [FaultWindow] = []

    public init() {}

    public static let none = StoreFaults()

    public var isEmpty: Bool { pushOutages.isEmpty && tokenExpiries.isEmpty && restarts.isEmpty }
}
