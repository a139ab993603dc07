import STUN
import ZoneCore

// The data path (RFC 8656 §11 Send/Data indications, §12 ChannelData). Each direction has a
// route function that decides from the bytes where they go without allocating, for a driver that
// moves payloads straight from its receive buffers (the relay daemon's fast path); the inputs
// `.clientDatagram` and `.peerDatagram` make the same decisions and queue actions with byte
// arrays, for the simulator, tests and simple drivers.

/// The slot of an allocation: stable for its life, small, so a driver can index an array of
/// relayed sockets with it. Ask `relayHandle(for:)` when `openRelay` comes.
public struct RelayHandle: Hashable, Sendable {
    public let index: Int

    public init(index: Int) { self.index = index }
}

extension TURNServer {
    /// Where a datagram from a client goes.
    public enum ClientRoute: Equatable, Sendable {
        /// ChannelData for a bound channel: send bytes 4..<4+length from the allocation's relayed
        /// address to `peer` (counted as relayed).
        case toPeer(RelayHandle, peer: Endpoint, length: Int)
        /// Not ChannelData (STUN, or nothing we know): feed it as `.clientDatagram`.
        case notChannelData
        /// Malformed, no allocation, channel unbound or expired, no permission, over the quota
        /// (counted as dropped or malformed).
        case dropped
    }

    /// Where a datagram from a peer goes.
    public enum PeerRoute: Equatable, Sendable {
        /// The peer has a channel: send `client` a ChannelData message on `channel` (4-byte header
        /// before the payload, padding after it), from the listening address `via` (counted).
        case channel(UInt16, client: Endpoint, via: Endpoint)
        /// Permitted but without a channel: feed it as `.peerDatagram`, which wraps it in a Data
        /// indication. Nothing was counted yet.
        case dataIndication
        /// No allocation, no permission, over the quota (counted as dropped).
        case dropped
    }

    /// The handle of the allocation on a relayed address.
    public func relayHandle(for relay: Endpoint) -> RelayHandle? {
        byRelay[relay].flatMap { allocations.slot(of: $0) }.map(RelayHandle.init)
    }

    /// Routes a datagram that arrived on a listening address, when it is ChannelData (first byte
    /// 0x40–0x7F, RFC 5764 §5.1.2); anything else is `notChannelData`.
    public mutating func routeClientDatagram(_ bytes: UnsafeRawBufferPointer, from client: Endpoint,
                                             to server: Endpoint, now: Instant) -> ClientRoute {
        guard let first = bytes.first, first >= 0x40 && first <= 0x7F else { return .notChannelData }
        // RFC 8656 §12.4: a channel in range, a length that fits the datagram, at most padding after.
        guard bytes.count >= 4 else { counters.malformed += 1; return .dropped }
        let channel = UInt16(first) << 8 | UInt16(bytes[1])
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard TURNServer.channelNumbers.contains(channel), bytes.count >= 4 + length,
              bytes.count - 4 - length < 4 else {
            counters.malformed += 1
            return .dropped
        }
        let generation = allocations.generation
        if let hit = routeCache.client(client, server: server, channel: channel, generation: generation, now: now) {
            guard relayOut(slot: hit.slot, bytes: length, now: now) else { return .dropped }
            return .toPeer(RelayHandle(index: hit.slot), peer: hit.peer, length: length)
        }
        guard let slot = allocations.slot(of: FiveTuple(client: client, server: server)),
              let peer = allocations.boundPeer(slot: slot, channel: channel, now: now),
              let validUntil = allocations.routeExpiry(slot: slot, channel: channel, peer: peer) else {
            counters.dropped += 1
            return .dropped
        }
        routeCache.remember(RouteCache.ClientEntry(client: client, server: server, channel: channel, slot: slot,
                                                   peer: peer, validUntil: validUntil, generation: generation))
        guard relayOut(slot: slot, bytes: length, now: now) else { return .dropped }
        return .toPeer(RelayHandle(index: slot), peer: peer, length: length)
    }

    /// Routes a datagram of `length` bytes that arrived from `peer` on the relayed address of `handle`.
    public mutating func routePeerDatagram(length: Int, from peer: Endpoint, handle: RelayHandle,
                                           now: Instant) -> PeerRoute {
        let generation = allocations.generation
        if length <= 0xFFFF,
           let hit = routeCache.peer(peer, slot: handle.index, generation: generation, now: now) {
            guard relayIn(slot: handle.index, bytes: length, now: now) else { return .dropped }
            return .channel(hit.channel, client: hit.client, via: hit.via)
        }
        guard allocations.permits(slot: handle.index, peer: peer, now: now) else {
            counters.dropped += 1
            return .dropped
        }
        guard let number = allocations.channel(slot: handle.index, for: peer, now: now), length <= 0xFFFF,
              let tuple = allocations.tuple(slot: handle.index) else {
            return .dataIndication
        }
        if let validUntil = allocations.routeExpiry(slot: handle.index, channel: number, peer: peer) {
            routeCache.remember(RouteCache.PeerEntry(slot: handle.index, peer: peer, channel: number,
                                                     client: tuple.client, via: tuple.server,
                                                     validUntil: validUntil, generation: generation))
        }
        guard relayIn(slot: handle.index, bytes: length, now: now) else { return .dropped }
        return .channel(number, client: tuple.client, via: tuple.server)
    }

    /// Counts bytes relayed to a peer, within the bandwidth quota; false (counted as dropped) when over.
    private mutating func relayOut(slot: Int, bytes: Int, now: Instant) -> Bool {
        if let rate = configuration.bytesPerSecondPerAllocation,
           !allocations[slot: slot]!.budgetOut.take(bytes, perSecond: rate, now: now) {
            counters.dropped += 1
            return false
        }
        allocations[slot: slot]!.bytesToPeer += bytes
        allocations[slot: slot]!.packetsToPeer += 1
        counters.packetsToPeers += 1
        counters.bytesToPeers += bytes
        return true
    }

    /// Counts bytes relayed to the client, within the bandwidth quota; false (counted as dropped) when over.
    private mutating func relayIn(slot: Int, bytes: Int, now: Instant) -> Bool {
        if let rate = configuration.bytesPerSecondPerAllocation,
           !allocations[slot: slot]!.budgetIn.take(bytes, perSecond: rate, now: now) {
            counters.dropped += 1
            return false
        }
        allocations[slot: slot]!.bytesToClient += bytes
        allocations[slot: slot]!.packetsToClient += 1
        counters.packetsToClients += 1
        counters.bytesToClients += bytes
        return true
    }

    // MARK: With actions

    /// A datagram arrived on a listening address: STUN (requests, Send indications) or ChannelData.
    mutating func clientDatagram(_ bytes: [UInt8], from client: Endpoint, to server: Endpoint, now: Instant) {
        let tuple = FiveTuple(client: client, server: server)
        let route = bytes.withUnsafeBytes { routeClientDatagram($0, from: client, to: server, now: now) }
        switch route {
        case .toPeer(let handle, let peer, let length):
            guard let relay = allocations[slot: handle.index]?.relay else { return }
            outputs.append(.toPeer(Array(bytes[4..<(4 + length)]), from: relay, to: peer))
            return
        case .dropped:
            return
        case .notChannelData:
            break
        }
        guard let first = bytes.first, first < 0x04 else { counters.malformed += 1; return }
        // The layout is kept: a request's MESSAGE-INTEGRITY is checked without scanning it again.
        let message: STUNMessage
        let layout: STUNMessageLayout
        do {
            layout = try STUNMessageLayout(scanning: bytes)
            message = try STUNMessage(decoding: bytes, layout: layout)
        } catch {
            counters.malformed += 1
            // A request whose header reads but whose attributes do not gets 400 (RFC 8489 §6.3).
            if let header = try? STUNMessageHeader(parsing: bytes), header.messageType.messageClass == .request {
                let stub = STUNMessage(method: header.messageType.method, messageClass: .request,
                                       transactionID: header.transactionID, attributes: [])
                counters.errors += 1
                if let answer = respond(stub.errorResponse(code: 400, reason: "Bad Request"), key: nil,
                                        tuple: tuple) {
                    outputs.append(answer)
                }
            }
            return
        }
        switch message.messageClass {
        case .request:
            counters.requests += 1
            request(message, raw: bytes, layout: layout, tuple: tuple, now: now)
            // A request sets expiries of its own 5-tuple's allocation only, and a Binding none.
            if message.method != .binding { scheduleExpiry(of: tuple) }
            refreshDeadline()
        case .indication:
            if message.method == .send { sendIndication(message, tuple: tuple, now: now) }
        case .successResponse, .errorResponse:
            counters.dropped += 1
        }
    }

    /// A datagram arrived on a relayed address from a peer (RFC 8656 §11.3, §12.4).
    mutating func peerDatagram(_ bytes: [UInt8], from peer: Endpoint, relay: Endpoint, now: Instant) {
        guard let handle = relayHandle(for: relay) else { counters.dropped += 1; return }
        switch routePeerDatagram(length: bytes.count, from: peer, handle: handle, now: now) {
        case .dropped:
            return
        case .channel(let number, let client, let via):
            outputs.append(.toClient(TURNServer.channelDataFrame(channel: number, payload: bytes), client: client,
                                     via: via))
        case .dataIndication:
            guard relayIn(slot: handle.index, bytes: bytes.count, now: now) else { return }
            let tuple = allocations[slot: handle.index]!.tuple
            let indication = STUNMessage(method: .data, messageClass: .indication,
                                         transactionID: .random(using: &random),
                                         attributes: [.xorPeerAddress(peer), .data(bytes)])
            guard let out = try? indication.encode(fingerprint: true) else { return }
            outputs.append(.toClient(out, client: tuple.client, via: tuple.server))
        }
    }

    private mutating func sendIndication(_ m: STUNMessage, tuple: FiveTuple, now: Instant) {
        // The allocation is read through its slot.
        guard let slot = allocations.slot(of: tuple), let relay = allocations[slot: slot]?.relay,
              let peer = m.xorPeerAddresses.first, let data = m.data,
              allocations.permits(slot: slot, peer: peer, now: now) else {
            counters.dropped += 1
            return
        }
        guard relayOut(slot: slot, bytes: data.count, now: now) else { return }
        outputs.append(.toPeer(data, from: relay, to: peer))
    }

    /// ChannelData to a client, padded to a multiple of 4 (RFC 8656 §12.5 allows it over UDP).
    static func channelDataFrame(channel: UInt16, payload: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 4 + (payload.count + 3) & ~3)
        out[0] = UInt8(channel >> 8)
        out[1] = UInt8(channel & 0xFF)
        out[2] = UInt8(payload.count >> 8)
        out[3] = UInt8(payload.count & 0xFF)
        out.replaceSubrange(4..<(4 + payload.count), with: payload)
        return out
    }
}
