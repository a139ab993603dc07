// How long presence in a group call lasts and how it is kept (docs/PROTOCOL.md §11.1). A member
// refreshes its `CallMember` record every `refreshInterval`; readers count it present until its
// `expiresAt`, at most `ttl` after the refresh. A crashed member therefore stops counting `ttl`
// after its last refresh at the latest (plus its clock's lead), with two refreshes lost in between.
import ZoneCore

/// The timing of presence records and how far their stamps are trusted.
public struct PresencePolicy: Hashable, Sendable {
    /// How long a member counts as present after its last refresh: 45 s, so that a crashed
    /// member's legs have ended within it (ICE consent expires after 30 s, RFC 7675 §5.1).
    public var ttl: Duration = .seconds(45)
    /// How often a member saves its record again: every 20 s, two chances before the TTL runs out,
    /// one request (and one push to each other device) per member every 20 s.
    public var refreshInterval: Duration = .seconds(20)
    /// How far a writer's clock may run ahead of or behind the store's; it widens the checks of
    /// `joinedAt` and `expiresAt` against the server's stamps.
    public var maxClockSkew: Duration = .seconds(10)
    /// The first wait before saving again after a failed save; doubled each time up to `retryCap`.
    public var retryBase: Duration = .seconds(1)
    /// The longest wait before saving again.
    public var retryCap: Duration = .seconds(8)

    public init() {}

    /// 45 s TTL, refreshed every 20 s.
    public static let `default` = PresencePolicy()
}
