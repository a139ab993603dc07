import ZoneCore

/// When the store refuses requests: a per-client rate limit and injected errors.
///
/// Off by default. CloudKit's documented behaviour: `requestRateLimited` and
/// `serviceUnavailable` carry `retryAfter` (20–30 s observed); `zoneBusy` asks for backoff.
/// The rate (≈ 40 requests/s per client) is an unconfirmed figure relayed from Apple support.
public struct ThrottlePolicy: Sendable, Hashable {
    /// Sustained requests per second per client (user + device); nil = unlimited.
    public var requestsPerSecond: Double?
    /// Requests a client may make at once before the rate applies.
    public var burst: Double = 40
    /// The `retryAfter` given with rate limiting and injected unavailability, in seconds.
    public var retryAfterSeconds: ClosedRange<Double> = 20...30
    /// Probability that any request fails with `requestRateLimited`.
    public var injectRateLimited: Double = 0
    /// Probability that any request fails with `serviceUnavailable`.
    public var injectServiceUnavailable: Double = 0
    /// Probability that a request touching a zone fails with `zoneBusy`.
    public var injectZoneBusy: Double = 0
    /// Seed for the injected errors and retry-after values.
    public var seed: UInt64 = 1

    public init() {}

    /// No throttling, no injected errors.
    public static let off = ThrottlePolicy()

    /// About 40 requests/s per client, as relayed for CloudKit.
    public static var cloudkit: ThrottlePolicy {
        var p = ThrottlePolicy()
        p.requestsPerSecond = 40
        return p
    }

    public var isOff: Bool {
        requestsPerSecond == nil && injectRateLimited == 0 && injectServiceUnavailable == 0 && injectZoneBusy == 0
    }
}

/// The throttle's state: token buckets per client and the seeded source of injected errors.
struct Throttle: Sendable {
    let policy: ThrottlePolicy
    private var random: SeededRandom
    private var buckets: [String: (tokens: Double, at: Instant)] = [:]
    private var blockedUntil: [String: Instant] = [:]

    init(policy: ThrottlePolicy) {
        self.policy = policy
        random = SeededRandom(seed: policy.seed)
    }

    /// The error refusing this request, or nil to let it through.
    mutating func admit(_ ctx: RequestContext, touchesZone: Bool) -> StoreError? {
        // Checked before the client's key is built: most stores run unthrottled.
        if policy.isOff { return nil }
        let client = ctx.clientKey
        let now = ctx.now
        if let until = blockedUntil[client], now < until {
            return StoreError(.requestRateLimited, "client is rate limited",
                              retryAfter: max(0.001, (until - now).seconds))
        }
        if let rate = policy.requestsPerSecond {
            var bucket = buckets[client] ?? (policy.burst, now)
            let refill = max(0, (now - bucket.at).seconds) * rate
            bucket = (min(policy.burst, bucket.tokens + refill), now)
            if bucket.tokens < 1 {
                buckets[client] = bucket
                let wait = retryAfter()
                blockedUntil[client] = now + .milliseconds(Int64(wait * 1000))
                return StoreError(.requestRateLimited, "more than \(rate) requests per second", retryAfter: wait)
            }
            bucket.tokens -= 1
            buckets[client] = bucket
        }
        if random.chance(policy.injectServiceUnavailable) {
            return StoreError(.serviceUnavailable, "service unavailable (injected)", retryAfter: retryAfter())
        }
        if random.chance(policy.injectRateLimited) {
            return StoreError(.requestRateLimited, "request rate limited (injected)", retryAfter: retryAfter())
        }
        if touchesZone, random.chance(policy.injectZoneBusy) {
            return StoreError(.zoneBusy, "zone busy (injected): retry with exponential backoff")
        }
        return nil
    }

    private mutating func retryAfter() -> Double {
        let r = policy.retryAfterSeconds
        return ((r.lowerBound + (r.upperBound - r.lowerBound) * random.nextUnit()) * 10).rounded() / 10
    }
}
