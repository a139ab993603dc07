// Telling protocols apart on one port: RFC 7983 §7 (the first byte of STUN, ZRTP, DTLS, TURN
// ChannelData and RTP/RTCP packets), and RFC 5761 §4 (RTP from RTCP by the second byte).
//
//                  +----------------+
//                  |        [0..3] -+--> STUN
//                  |      [16..19] -+--> ZRTP
//      packet -->  |      [20..63] -+--> DTLS
//                  |      [64..79] -+--> TURN Channel
//                  |    [128..191] -+--> RTP/RTCP
//                  +----------------+
//
// Anything else is dropped. RTCP packet types 192–223 sit where an RTP packet's marker bit and
// payload type would be, and RFC 5761 keeps RTP payload types out of 64–95, so the second byte
// separates the two.

/// What a packet on a multiplexed port is, by RFC 7983's first-byte ranges.
public enum MultiplexedPacketKind: Hashable, Sendable {
    /// STUN (first byte 0–3).
    case stun
    /// ZRTP (16–19).
    case zrtp
    /// DTLS (20–63).
    case dtls
    /// TURN ChannelData (64–79).
    case turnChannel
    /// RTP or RTCP (128–191); see `PacketDemultiplexer.isRTCP`.
    case rtpOrRTCP
    /// None of the above (or empty): drop it.
    case unknown
}

/// First-byte demultiplexing (RFC 7983) and RTP/RTCP separation (RFC 5761).
public enum PacketDemultiplexer {
    /// The kind of packet whose first byte is `byte`.
    public static func classify(firstByte byte: UInt8) -> MultiplexedPacketKind {
        switch byte {
        case 0...3: .stun
        case 16...19: .zrtp
        case 20...63: .dtls
        case 64...79: .turnChannel
        case 128...191: .rtpOrRTCP
        default: .unknown
        }
    }

    /// The kind of `packet`; an empty packet is `.unknown`.
    public static func classify(_ packet: UnsafeRawBufferPointer) -> MultiplexedPacketKind {
        packet.isEmpty ? .unknown : classify(firstByte: packet[0])
    }

    /// The kind of `packet`; an empty packet is `.unknown`.
    public static func classify(_ packet: [UInt8]) -> MultiplexedPacketKind {
        packet.isEmpty ? .unknown : classify(firstByte: packet[0])
    }

    /// True when an RTP/RTCP packet's second byte is an RTCP packet type (192–223, RFC 5761 §4).
    public static func isRTCP(secondByte: UInt8) -> Bool { (192...223).contains(secondByte) }

    /// True when `packet` (already classified `.rtpOrRTCP`) is RTCP; false for RTP and for
    /// packets too short to tell.
    public static func isRTCP(_ packet: [UInt8]) -> Bool { packet.count >= 2 && isRTCP(secondByte: packet[1]) }
}
