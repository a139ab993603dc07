import STUN
import ZoneCore

/// The 5-tuple that names an allocation over UDP: client address and the server address it used.
public struct FiveTuple: Hashable, Sendable, CustomStringConvertible {
    public var client: Endpoint
    public var server: Endpoint

    public init(client: Endpoint, server: Endpoint) {
        self.client = client
        self.server = server
    }

    public var description: String { "\(client)→\(server)" }

    /// Hashes two words, one per endpoint, rather than each address's case and bits and each port:
    /// every request on an allocation looks its 5-tuple up, several times. Equal tuples give equal
    /// words; IPv6 addresses are folded into theirs, so unequal ones may collide, which `==` settles.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(Self.word(client))
        hasher.combine(Self.word(server))
    }

    /// An endpoint as one number: the IPv4 address above the port, or the IPv6 address's halves
    /// folded there with the top bit set.
    private static func word(_ endpoint: Endpoint) -> UInt64 {
        switch endpoint.address {
        case .v4(let a): UInt64(a) << 16 | UInt64(endpoint.port)
        case .v6(let bits): 1 << 63 | (bits.high ^ bits.low) << 16 | UInt64(endpoint.port)
        }
    }
}

/// One allocation (RFC 8656 §2.2): a relayed transport address for one client 5-tuple, with its
/// permissions and channels, each with its own expiry.
struct Allocation: Sendable {
    let tuple: FiveTuple
    /// The relayed transport address; it changes only when the driver cannot bind it (see
    /// `TURNServer.relayBindFailed`).
    var relay: Endpoint
    let user: String
    /// The lifetime granted at creation, for re-sending the success answer.
    var grantedSeconds: UInt32 = 0
    /// Whether the relayed port may be changed if binding fails: not when EVEN-PORT or a
    /// RESERVATION-TOKEN chose it.
    var portIsFree = true
    /// Ports tried that the driver could not bind.
    var failedBinds = 0
    /// The transaction that created it, so a retransmitted Allocate gets the same answer.
    let transactionID: [UInt8]
    let key: STUNIntegrityKey
    /// The NONCE of the requests authenticated on this 5-tuple. Its signature was checked for
    /// this 5-tuple when it was accepted, so a later request carrying the same NONCE needs only
    /// its expiry checked (`TURNServer.nonceIsFresh`), not the HMAC of the nonce again.
    var verifiedNonce: String
    var expires: Instant
    /// Peer IP → expiry (permissions are per IP address, RFC 8656 §9).
    var permissions: [IPAddress: Instant] = [:]
    /// Channel number → (peer, expiry), and the reverse map.
    var channels: [UInt16: (peer: Endpoint, expires: Instant)] = [:]
    var channelByPeer: [Endpoint: UInt16] = [:]
    var bytesToPeer = 0
    var bytesToClient = 0
    var packetsToPeer = 0
    var packetsToClient = 0
    /// Token bucket for the bandwidth quota, per direction.
    var budgetOut = RateBudget()
    var budgetIn = RateBudget()
    /// The instant of its current entry in the server's `ExpiryQueue`; entries at any other
    /// instant are stale.
    var scheduledExpiry: Instant?

    /// The earliest of an allocation's own expiry (`expires`), its permissions' and its channels':
    /// when the timer next has something of it to remove. Given the fields, not the allocation:
    /// `AllocationTable` reads them from the allocation's slot.
    static func earliestExpiry(expires: Instant, permissions: [IPAddress: Instant],
                               channels: [UInt16: (peer: Endpoint, expires: Instant)]) -> Instant {
        var next = expires
        for e in permissions.values where e < next { next = e }
        for c in channels.values where c.expires < next { next = c.expires }
        return next
    }

    func permits(_ peer: Endpoint, now: Instant) -> Bool {
        guard let expiry = permissions[peer.address.unmapped] else { return false }
        return expiry > now
    }

    /// The peer bound to `channel`, when the binding and the peer's permission are both current.
    func boundPeer(_ channel: UInt16, now: Instant) -> Endpoint? {
        guard let c = channels[channel], c.expires > now, permits(c.peer, now: now) else { return nil }
        return c.peer
    }

    /// The channel bound to `peer`, when the binding is current.
    func channel(for peer: Endpoint, now: Instant) -> UInt16? {
        guard let number = channelByPeer[peer], let c = channels[number], c.expires > now else { return nil }
        return number
    }
}

/// Bytes allowed per second, refilled continuously.
struct RateBudget: Sendable {
    var tokens = 0.0
    var at = Instant.zero

    mutating func take(_ bytes: Int, perSecond rate: Int?, now: Instant) -> Bool {
        guard let rate else { return true }
        tokens = min(Double(rate), tokens + (now - at).seconds * Double(rate))
        at = now
        if tokens < Double(bytes) { return false }
        tokens -= Double(bytes)
        return true
    }
}
