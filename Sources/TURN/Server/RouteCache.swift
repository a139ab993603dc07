import ZoneCore

/// The data path's recent ChannelData decisions, so a flood on a few channels does not hash
/// 5-tuples, channel numbers and peer addresses for every datagram.
///
/// Direct-mapped: a cheap mix of the key picks one entry, which holds the whole key and is
/// compared in full. An entry answers only while nothing in the allocation table has changed
/// since it was filled (`generation`) and until the earliest expiry it depended on (channel
/// binding and permission, RFC 8656 §9, §12), so a hit decides exactly as the tables would.
/// Only bound, permitted routes are kept: drops take the slow path and are counted there.
struct RouteCache: Sendable {
    /// A client's ChannelData on one channel of one 5-tuple.
    struct ClientEntry: Sendable {
        var client: Endpoint
        var server: Endpoint
        var channel: UInt16
        var slot: Int
        var peer: Endpoint
        var validUntil: Instant
        var generation: UInt64
    }

    /// A peer's datagram on one relayed slot, for a peer that has a channel.
    struct PeerEntry: Sendable {
        var slot: Int
        var peer: Endpoint
        var channel: UInt16
        var client: Endpoint
        var via: Endpoint
        var validUntil: Instant
        var generation: UInt64
    }

    /// Entries per direction; a power of two.
    static let size = 64
    private var clients: [ClientEntry?] = Array(repeating: nil, count: RouteCache.size)
    private var peers: [PeerEntry?] = Array(repeating: nil, count: RouteCache.size)

    private static func index(_ a: Int, _ port: UInt16) -> Int {
        (a &* 0x9E37 &+ Int(port) &* 31) & (RouteCache.size - 1)
    }

    func client(_ client: Endpoint, server: Endpoint, channel: UInt16, generation: UInt64,
                now: Instant) -> ClientEntry? {
        guard let e = clients[RouteCache.index(Int(channel), client.port)], e.generation == generation,
              e.validUntil > now, e.channel == channel, e.client == client, e.server == server else { return nil }
        return e
    }

    mutating func remember(_ entry: ClientEntry) {
        clients[RouteCache.index(Int(entry.channel), entry.client.port)] = entry
    }

    func peer(_ peer: Endpoint, slot: Int, generation: UInt64, now: Instant) -> PeerEntry? {
        guard let e = peers[RouteCache.index(slot, peer.port)], e.generation == generation, e.validUntil > now,
              e.slot == slot, e.peer == peer else { return nil }
        return e
    }

    mutating func remember(_ entry: PeerEntry) {
        peers[RouteCache.index(entry.slot, entry.peer.port)] = entry
    }
}
