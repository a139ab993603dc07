// Consent freshness: RFC 7675. Once a pair is selected, the agent sends a Binding request on it
// every `interval`, randomized by ±`jitter` (§5.1: "randomized … range 0.8 to 1.2 times the basic
// period"), and records every authenticated success response. Without one for `disconnectedAfter`
// the agent reports `disconnected` (a hint, as browsers do; traffic keeps flowing and consent may
// come back); without one for `expiry` (30 s, §5.1) consent is lost: the agent reports `failed`
// and stops sending on the pair.

import ZoneCore

/// Consent-freshness knobs.
public struct ConsentConfiguration: Hashable, Sendable {
    /// The basic period between consent checks (RFC 7675: 5 s).
    public var interval: Duration
    /// The randomization of each period, as a fraction (RFC 7675: 0.2, so 4–6 s).
    public var jitter: Double
    /// How long without a response before the state becomes `disconnected`.
    public var disconnectedAfter: Duration
    /// How long without a response before consent is lost (RFC 7675: 30 s).
    public var expiry: Duration

    public init(interval: Duration = .seconds(5), jitter: Double = 0.2, disconnectedAfter: Duration = .seconds(10),
                expiry: Duration = .seconds(30)) {
        precondition(interval > .zero && jitter >= 0 && jitter < 1 && disconnectedAfter <= expiry)
        self.interval = interval
        self.jitter = jitter
        self.disconnectedAfter = disconnectedAfter
        self.expiry = expiry
    }
}

/// Consent on the selected pair.
struct ConsentFreshness {
    /// What consent says about the selected pair right now.
    enum Status: Hashable {
        case fresh
        case disconnected
        case expired
    }

    let configuration: ConsentConfiguration
    private(set) var lastResponse: Instant
    private(set) var nextCheck: Instant

    init(configuration: ConsentConfiguration, now: Instant, random: inout SeededRandom) {
        self.configuration = configuration
        lastResponse = now
        nextCheck = now
        nextCheck = now + period(&random)
    }

    private func period(_ random: inout SeededRandom) -> Duration {
        let factor = 1 - configuration.jitter + 2 * configuration.jitter * random.nextUnit()
        return .nanoseconds(Int64(Double(configuration.interval.nanoseconds) * factor))
    }

    /// An authenticated success response arrived.
    mutating func responded(now: Instant) { lastResponse = now }

    /// True when a consent check is due; schedules the next one.
    mutating func checkDue(now: Instant, random: inout SeededRandom) -> Bool {
        guard now >= nextCheck else { return false }
        nextCheck = now + period(&random)
        return true
    }

    func status(now: Instant) -> Status {
        let silence = now - lastResponse
        if silence >= configuration.expiry { return .expired }
        if silence >= configuration.disconnectedAfter { return .disconnected }
        return .fresh
    }

    /// The next instant something changes: a check is due or the status moves on.
    func deadline(now: Instant) -> Instant {
        var next = nextCheck
        switch status(now: now) {
        case .fresh: next = min(next, lastResponse + configuration.disconnectedAfter)
        case .disconnected: next = min(next, lastResponse + configuration.expiry)
        case .expired: break
        }
        return next
    }
}
