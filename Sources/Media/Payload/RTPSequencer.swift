// Turning payloads into RTP packets (RFC 3550 §5.1): one SSRC and payload type, consecutive
// sequence numbers, and a media timestamp shared by all packets of a frame (90 kHz for video,
// RFC 3551 §5). The initial sequence number and timestamp are random (RFC 3550 §5.1) — from a
// seed, so runs are reproducible.

import ZoneCore

/// Stamps a stream's payloads with sequence numbers, timestamps, SSRC and payload type.
public struct RTPSequencer: Sendable {
    public let ssrc: UInt32
    public let payloadType: UInt8
    /// The next sequence number to use.
    public private(set) var nextSequenceNumber: UInt16
    /// The RTP timestamp of media time zero.
    public let timestampOffset: UInt32

    public init(ssrc: UInt32, payloadType: UInt8, initialSequenceNumber: UInt16, timestampOffset: UInt32) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        nextSequenceNumber = initialSequenceNumber
        self.timestampOffset = timestampOffset
    }

    /// A sequencer with random SSRC, initial sequence number and timestamp offset from `random`.
    public init(payloadType: UInt8, random: inout SeededRandom) {
        self.init(ssrc: UInt32(truncatingIfNeeded: random.next()), payloadType: payloadType,
                  initialSequenceNumber: UInt16(truncatingIfNeeded: random.next()),
                  timestampOffset: UInt32(truncatingIfNeeded: random.next()))
    }

    /// Packets for one frame's payloads at media time `mediaTimestamp` (in clock-rate ticks).
    public mutating func packets(for chunks: [RTPPayloadChunk], mediaTimestamp: Int64) -> [RTPPacket] {
        let timestamp = timestampOffset &+ UInt32(truncatingIfNeeded: mediaTimestamp)
        return chunks.map { chunk in
            defer { nextSequenceNumber &+= 1 }
            return RTPPacket(payloadType: payloadType, sequenceNumber: nextSequenceNumber, timestamp: timestamp,
                             ssrc: ssrc, marker: chunk.marker, payload: chunk.payload)
        }
    }
}
