import ZoneCore

/// What a TURN server allows and how long things live (RFC 8656 §3, §7–§12).
public struct TURNServerConfiguration: Sendable {
    /// How users prove who they are (long-term credentials, RFC 8489 §9.2).
    public enum Authentication: Sendable {
        /// Fixed users and passwords.
        case users([String: String])
        /// TURN REST API ephemeral credentials: username `expiry:user`, password
        /// base64(HMAC-SHA1(secret, username)); several relays share the secret, no state.
        case sharedSecret(String)
    }

    public var realm: String
    public var authentication: Authentication
    /// The address relayed transport addresses are allocated on.
    public var relayAddress: IPAddress
    public var relayPorts: ClosedRange<UInt16> = 49152...65535
    /// Allocation lifetime when the client asks for less (RFC 8656 §7.2: 600 s) and the most it gets.
    public var defaultLifetime: Duration = .seconds(600)
    public var maxLifetime: Duration = .seconds(3600)
    /// RFC 8656 §9: permissions last 300 s; §12: channel bindings 600 s.
    public var permissionLifetime: Duration = .seconds(300)
    public var channelLifetime: Duration = .seconds(600)
    /// How long a nonce stays fresh before requests get 438 Stale Nonce.
    public var nonceLifetime: Duration = .seconds(600)
    /// How long a port reserved by EVEN-PORT's R bit waits for its RESERVATION-TOKEN.
    public var reservationLifetime: Duration = .seconds(30)
    public var maxAllocationsPerUser = 64
    public var maxAllocations = 10_000
    /// Relayed bytes per second per allocation, each direction; nil = unlimited.
    public var bytesPerSecondPerAllocation: Int?
    public var peerPolicy = PeerAddressPolicy()
    public var software = "ZoneRTC relay"
    /// Secret that signs nonces, so they need no table (random per start unless given).
    public var nonceKey: [UInt8]

    public init(realm: String, authentication: Authentication, relayAddress: IPAddress, nonceKey: [UInt8]) {
        self.realm = realm
        self.authentication = authentication
        self.relayAddress = relayAddress
        self.nonceKey = nonceKey
    }
}

/// Which peer addresses relays may reach. Private, loopback and special ranges are denied unless
/// allowed, as coturn does (`--allow-loopback-peers`, `--allowed-peer-ip`, `--denied-peer-ip`).
public struct PeerAddressPolicy: Sendable {
    public var allowLoopback = false
    public var allow: [CIDR] = []
    public var deny: [CIDR] = []

    public init() {}

    /// Special-purpose ranges never relayed to by default (RFC 6890 and friends).
    static let special: [CIDR] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4", "::/128", "fc00::/7", "fe80::/10", "ff00::/8",
    ].map { try! CIDR(parsing: $0) }

    /// Whether relaying to `address` is allowed. Explicit allow wins over deny and the defaults.
    public func permits(_ address: IPAddress) -> Bool {
        let a = address.unmapped
        if allow.contains(where: { $0.contains(a) }) { return true }
        if deny.contains(where: { $0.contains(a) }) { return false }
        if a.isLoopback { return allowLoopback }
        return !PeerAddressPolicy.special.contains { $0.contains(a) }
    }
}
