import STUN
import ZoneCore

extension TURNServer {
    /// A datagram arrived on a listening address: STUN (requests, Send indications) or ChannelData.
    public mutating func clientDatagram(_ bytes: [UInt8], from client: Endpoint, to server: Endpoint,
                                        now: Instant) -> [Action] {
        let tuple = FiveTuple(client: client, server: server)
        guard let first = bytes.first else { counters.malformed += 1; return [] }
        if first >= 0x40 && first <= 0x7F {
            return channelData(bytes, tuple: tuple, now: now)
        }
        guard first < 0x04 else { counters.malformed += 1; return [] }
        let message: STUNMessage
        do { message = try STUNMessage(decoding: bytes) } catch {
            counters.malformed += 1
            // A request whose header reads but whose attributes do not gets 400 (RFC 8489 §6.3).
            if let header = try? STUNMessageHeader(parsing: bytes), header.messageType.messageClass == .request {
                let stub = STUNMessage(method: header.messageType.method, messageClass: .request,
                                       transactionID: header.transactionID, attributes: [])
                counters.errors += 1
                return respond(stub.errorResponse(code: 400, reason: "Bad Request"), key: nil, tuple: tuple).map { [$0] } ?? []
            }
            return []
        }
        switch message.messageClass {
        case .request:
            counters.requests += 1
            defer { refreshDeadline() }
            return request(message, raw: bytes, tuple: tuple, now: now)
        case .indication:
            if message.method == .send { return sendIndication(message, tuple: tuple, now: now) }
            return []
        case .successResponse, .errorResponse:
            counters.dropped += 1
            return []
        }
    }

    /// A datagram arrived on a relayed address from a peer (RFC 8656 §11.3, §12.4).
    public mutating func peerDatagram(_ bytes: [UInt8], from peer: Endpoint, relay: Endpoint, now: Instant) -> [Action] {
        guard let tuple = byRelay[relay], var a = allocations[tuple] else { counters.dropped += 1; return [] }
        guard a.permits(peer, now: now) else { counters.dropped += 1; return [] }
        guard a.budgetIn.take(bytes.count, perSecond: configuration.bytesPerSecondPerAllocation, now: now) else {
            allocations[tuple] = a
            counters.dropped += 1
            return []
        }
        let out: [UInt8]?
        if let number = a.channelByPeer[peer], let c = a.channels[number], c.expires > now {
            out = TURNServer.channelDataFrame(channel: number, payload: bytes)
        } else {
            let indication = STUNMessage(method: .data, messageClass: .indication,
                                         transactionID: .random(using: &random),
                                         attributes: [.xorPeerAddress(peer), .data(bytes)])
            out = try? indication.encode(fingerprint: true)
        }
        guard let out else { counters.dropped += 1; return [] }
        a.bytesToClient += bytes.count
        a.packetsToClient += 1
        allocations[tuple] = a
        counters.packetsToClients += 1
        counters.bytesToClients += bytes.count
        return [.toClient(out, client: tuple.client, via: tuple.server)]
    }

    private mutating func channelData(_ bytes: [UInt8], tuple: FiveTuple, now: Instant) -> [Action] {
        guard let frame = TURNServer.parseChannelData(bytes) else { counters.malformed += 1; return [] }
        guard var a = allocations[tuple], let c = a.channels[frame.channel], c.expires > now,
              a.permits(c.peer, now: now) else {
            counters.dropped += 1
            return []
        }
        return forward(frame.payload, to: c.peer, allocation: &a, tuple: tuple, now: now)
    }

    private mutating func sendIndication(_ m: STUNMessage, tuple: FiveTuple, now: Instant) -> [Action] {
        guard var a = allocations[tuple], let peer = m.xorPeerAddresses.first, let data = m.data,
              a.permits(peer, now: now) else {
            counters.dropped += 1
            return []
        }
        return forward(data, to: peer, allocation: &a, tuple: tuple, now: now)
    }

    private mutating func forward(_ payload: [UInt8], to peer: Endpoint, allocation a: inout Allocation,
                                  tuple: FiveTuple, now: Instant) -> [Action] {
        guard a.budgetOut.take(payload.count, perSecond: configuration.bytesPerSecondPerAllocation, now: now) else {
            allocations[tuple] = a
            counters.dropped += 1
            return []
        }
        a.bytesToPeer += payload.count
        a.packetsToPeer += 1
        allocations[tuple] = a
        counters.packetsToPeers += 1
        counters.bytesToPeers += payload.count
        return [.toPeer(payload, from: a.relay, to: peer)]
    }
}

extension TURNServer {
    /// A ChannelData message from a client (RFC 5766 §11.4, RFC 8656 §12.4): a channel in
    /// `channelNumbers`, a length no longer than the datagram, then nothing but padding.
    static func parseChannelData(_ bytes: [UInt8]) -> (channel: UInt16, payload: [UInt8])? {
        guard bytes.count >= 4 else { return nil }
        let channel = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard channelNumbers.contains(channel), bytes.count >= 4 + length, bytes.count - 4 - length < 4 else {
            return nil
        }
        return (channel, Array(bytes[4..<(4 + length)]))
    }

    /// ChannelData to a client, padded to a multiple of 4 (RFC 8656 §12.5 allows it over UDP).
    static func channelDataFrame(channel: UInt16, payload: [UInt8]) -> [UInt8]? {
        guard payload.count <= 0xFFFF else { return nil }
        var out = [UInt8](repeating: 0, count: 4 + (payload.count + 3) & ~3)
        out[0] = UInt8(channel >> 8); out[1] = UInt8(channel & 0xFF)
        out[2] = UInt8(payload.count >> 8); out[3] = UInt8(payload.count & 0xFF)
        out.replaceSubrange(4..<(4 + payload.count), with: payload)
        return out
    }
}
