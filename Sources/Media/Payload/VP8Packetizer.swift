// VP8 packetization (RFC 7741 §4.2–4.4): a frame is cut into payloads of at most the configured
// size, each behind a payload descriptor carrying the frame's 15-bit PictureID; the first has
// S=1 and PartID=0. Partition boundaries are not looked for (allowed by §4.4: "a packetizer
// may … not align with partitions"), so every packet is in partition 0.

/// Cuts VP8 frames into RTP payloads.
public struct VP8Packetizer: RTPPacketizer {
    public let maxPayloadSize: Int
    /// The PictureID of the next frame (15 bits, wrapping).
    public private(set) var nextPictureID: UInt16

    public init(maxPayloadSize: Int = defaultMaxPayloadSize, initialPictureID: UInt16 = 0) {
        precondition(maxPayloadSize > 4, "a VP8 payload has room for its 4-byte descriptor and data")
        self.maxPayloadSize = maxPayloadSize
        nextPictureID = initialPictureID & 0x7FFF
    }

    public mutating func packetize(_ frame: [UInt8]) throws(MediaError) -> [RTPPayloadChunk] {
        guard !frame.isEmpty else { throw MediaError(.malformed, "a VP8 frame is not empty") }
        defer { nextPictureID = (nextPictureID + 1) & 0x7FFF }
        let room = maxPayloadSize - 4
        var chunks: [RTPPayloadChunk] = []
        var start = 0
        while start < frame.count {
            let end = min(frame.count, start + room)
            let descriptor = VP8PayloadDescriptor(startOfPartition: start == 0, pictureID: nextPictureID)
            chunks.append(RTPPayloadChunk(payload: descriptor.serialized() + frame[start..<end],
                                          marker: end == frame.count))
            start = end
        }
        return chunks
    }
}
