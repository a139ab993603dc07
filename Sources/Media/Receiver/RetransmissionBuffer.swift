// The sender's store of recently sent RTP packets, for answering generic NACKs (RFC 4585
// §6.2.1) by resending the original packet (RFC 4588 §1 discusses retransmission; this sends
// the same packet rather than an RTX stream). Bounded by count and by age.

import ZoneCore

/// Recently sent packets, by sequence number.
public struct RetransmissionBuffer: Sendable {
    private struct Entry: Sendable {
        var packet: RTPPacket
        var sent: Instant
    }

    public let capacity: Int
    /// Packets older than this are not resent: the receiver has given up on them.
    public let maxAge: Duration
    private var entries: [Entry?]

    public init(capacity: Int = 1024, maxAge: Duration = .seconds(1)) {
        precondition((1...32768).contains(capacity), "capacity is 1…32768 packets")
        self.capacity = capacity
        self.maxAge = maxAge
        entries = Array(repeating: nil, count: capacity)
    }

    /// Remembers a packet that was just sent, replacing the oldest in its slot.
    public mutating func store(_ packet: RTPPacket, now: Instant) {
        entries[Int(packet.sequenceNumber) % capacity] = Entry(packet: packet, sent: now)
    }

    /// The packet with `sequenceNumber`, if still held and young enough.
    public func packet(sequenceNumber: UInt16, now: Instant) -> RTPPacket? {
        guard let entry = entries[Int(sequenceNumber) % capacity], entry.packet.sequenceNumber == sequenceNumber,
              now - entry.sent <= maxAge else { return nil }
        return entry.packet
    }

    /// The packets a NACK asks for that are still held, in the NACK's order.
    public func packets(for nack: RTCPGenericNack, now: Instant) -> [RTPPacket] {
        nack.lostSequenceNumbers.compactMap { packet(sequenceNumber: $0, now: now) }
    }
}
