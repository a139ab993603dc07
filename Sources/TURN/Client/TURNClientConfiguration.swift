// The knobs of a TURN client (RFC 8656 §3 and §7–§12, RFC 8489 §6.2.1 for retransmissions).
//
// The lifetimes a server grants are fixed by RFC 8656: permissions last 300 s (§9) and channel
// bindings 600 s (§12), so the client refreshes them a minute early by default; the allocation's
// lifetime is whatever the server answers in LIFETIME (§7.3), refreshed `allocationRefreshMargin`
// before it runs out.

import STUN
import ZoneCore

/// Everything a `TURNClient` is created with.
public struct TURNClientConfiguration: Sendable {
    /// The TURN server's listening address; datagrams from anywhere else are ignored.
    public var server: Endpoint
    /// The long-term credential username (RFC 8489 §9.2).
    public var username: String
    /// The long-term credential password; the key is MD5(username ":" realm ":" SASLprep(password)).
    public var password: String
    /// The LIFETIME asked for in Allocate and Refresh (RFC 8656 §7.1, §8.1); nil leaves it to the
    /// server (600 s by default).
    public var requestedLifetime: Duration?
    /// How long before the allocation expires the client refreshes it (capped at half the
    /// granted lifetime).
    public var allocationRefreshMargin: Duration
    /// How long after it is installed a permission is refreshed (RFC 8656 §9: it lasts 300 s).
    public var permissionRefreshInterval: Duration
    /// How long after it is bound a channel is refreshed (RFC 8656 §12: it lasts 600 s).
    public var channelRefreshInterval: Duration
    /// How long sends to a peer whose CreatePermission failed are dropped before trying again.
    public var permissionRetryDelay: Duration
    /// Retransmission of requests (RFC 8489 §6.2.1: 500 ms initial RTO, Rc = 7, Rm = 16).
    public var timing: STUNTransactionTiming
    /// How many payloads may wait for permissions at once; the oldest is dropped beyond that.
    public var maxQueuedPayloads: Int
    /// How many 401/438 challenges in a row one request may answer before it fails (a server
    /// that keeps changing its nonce must not keep the client busy forever).
    public var maxChallenges: Int
    /// How many times an Allocate refused with 437 (Allocation Mismatch, RFC 8656 §7.3) is sent
    /// again, after the retransmission timeout and twice as long each time, before it fails. The
    /// 5-tuple is usually held by an allocation of this client's socket that is being deleted:
    /// after an ICE restart the new epoch allocates from the socket the retired epoch's
    /// allocation, whose Refresh with LIFETIME 0 may still be on its way, used.
    public var allocationMismatchRetries: Int
    /// The seed of transaction IDs.
    public var seed: UInt64

    public init(
        server: Endpoint, username: String, password: String, requestedLifetime: Duration? = .seconds(600),
        allocationRefreshMargin: Duration = .seconds(60), permissionRefreshInterval: Duration = .seconds(240),
        channelRefreshInterval: Duration = .seconds(540), permissionRetryDelay: Duration = .seconds(10),
        timing: STUNTransactionTiming = STUNTransactionTiming(), maxQueuedPayloads: Int = 64, maxChallenges: Int = 3,
        allocationMismatchRetries: Int = 4, seed: UInt64
    ) {
        precondition(maxQueuedPayloads >= 0 && maxChallenges >= 1, "queue bound ≥ 0 and at least one challenge")
        precondition((0...STUNTransactionTiming.maxCount).contains(allocationMismatchRetries),
                     "allocation mismatch retries 0…\(STUNTransactionTiming.maxCount)")
        precondition(permissionRefreshInterval > .zero && channelRefreshInterval > .zero)
        self.server = server
        self.username = username
        self.password = password
        self.requestedLifetime = requestedLifetime
        self.allocationRefreshMargin = allocationRefreshMargin
        self.permissionRefreshInterval = permissionRefreshInterval
        self.channelRefreshInterval = channelRefreshInterval
        self.permissionRetryDelay = permissionRetryDelay
        self.timing = timing
        self.maxQueuedPayloads = maxQueuedPayloads
        self.maxChallenges = maxChallenges
        self.allocationMismatchRetries = allocationMismatchRetries
        self.seed = seed
    }
}
