// The RTP retransmission payload format, RFC 4588 §4, in session multiplexing (§5.3, what
// WebRTC negotiates with `a=ssrc-group:FID` and an `rtx` payload type): a retransmission travels
// on its own SSRC and payload type, with its own sequence numbers, and carries the original
// packet's sequence number (OSN, two bytes) before the original payload.
//
//    0                   1                   2                   3
//   |                         RTP Header                            |  RTX SSRC, RTX PT, RTX seq;
//   |            OSN                |                               |  timestamp and marker of
//   |                  Original RTP Packet Payload                  |  the original (§4)

/// Where a stream's retransmissions travel: their SSRC and payload type.
public struct RetransmissionStream: Equatable, Sendable {
    /// The RTX SSRC; for a receiver, nil accepts the RTX payload type from any source other
    /// than the original stream's (when the remote did not announce an FID group).
    public var ssrc: UInt32?
    /// The RTX payload type (`a=rtpmap:<pt> rtx/90000`, `apt` = the original's).
    public var payloadType: UInt8

    public init(ssrc: UInt32?, payloadType: UInt8) {
        precondition(payloadType < 128, "an RTP payload type is 7 bits")
        self.ssrc = ssrc
        self.payloadType = payloadType
    }
}

extension RTPPacket {
    /// This packet as a retransmission (RFC 4588 §4): on `ssrc` with `payloadType` and
    /// `sequenceNumber` from the RTX stream's own sequence space, the original's timestamp,
    /// marker, CSRCs and header extension, and the OSN before the payload; no padding.
    public func retransmission(ssrc: UInt32, payloadType: UInt8, sequenceNumber: UInt16) -> RTPPacket {
        var payload: [UInt8] = [UInt8(truncatingIfNeeded: self.sequenceNumber >> 8),
                                UInt8(truncatingIfNeeded: self.sequenceNumber)]
        payload.append(contentsOf: self.payload)
        return RTPPacket(payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: ssrc,
                         marker: marker, csrcs: csrcs, headerExtension: headerExtension, payload: payload)
    }

    /// The original packet a retransmission carries, on the original `ssrc` and `payloadType`.
    ///
    /// Throws `.truncated` when the payload is too short for the OSN (a packet with no payload at
    /// all is padding, which senders use to probe bandwidth: `isRetransmissionPadding`).
    public func originalFromRetransmission(ssrc: UInt32, payloadType: UInt8) throws(MediaError) -> RTPPacket {
        guard payload.count >= 2 else {
            throw MediaError(.truncated, "an RTX packet of \(payload.count) payload bytes has no room for the OSN")
        }
        let osn = UInt16(payload[0]) << 8 | UInt16(payload[1])
        return RTPPacket(payloadType: payloadType, sequenceNumber: osn, timestamp: timestamp, ssrc: ssrc,
                         marker: marker, csrcs: csrcs, headerExtension: headerExtension,
                         payload: Array(payload[2...]))
    }

    /// True for an RTX packet that carries nothing (only padding, or an empty payload).
    public var isRetransmissionPadding: Bool { payload.isEmpty }
}
