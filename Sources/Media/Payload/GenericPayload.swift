// A payload format of our own for any frame (IVF FourCCs without an RTP format here, raw Y4M
// pictures): each payload is a 2-byte header and a slice of the frame.
//
//    0                   1
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
//   |F|L|      frame index (14)     |
//
// F: this payload is a frame's first fragment; L: its last (both set for a one-packet frame).
// The frame index counts frames modulo 2^14, so a receiver can tell that every fragment belongs
// to one frame. The marker bit is set with L (RFC 3551 §4.1).

/// The 2-byte header of our generic payload format.
public struct GenericPayloadHeader: Equatable, Sendable {
    public static let size = 2

    public var isFirst: Bool
    public var isLast: Bool
    /// The frame index, 14 bits.
    public var frameIndex: UInt16

    public init(isFirst: Bool, isLast: Bool, frameIndex: UInt16) {
        self.isFirst = isFirst
        self.isLast = isLast
        self.frameIndex = frameIndex & 0x3FFF
    }

    public init(parsing payload: [UInt8]) throws(MediaError) {
        guard payload.count >= Self.size else {
            throw MediaError(.truncated, at: payload.count, "generic payload header needs 2 bytes")
        }
        isFirst = payload[0] & 0x80 != 0
        isLast = payload[0] & 0x40 != 0
        frameIndex = UInt16(payload[0] & 0x3F) << 8 | UInt16(payload[1])
    }

    public func serialized() -> [UInt8] {
        [(isFirst ? 0x80 : 0) | (isLast ? 0x40 : 0) | UInt8(frameIndex >> 8), UInt8(frameIndex & 0xFF)]
    }
}

/// Cuts any frame into generic payloads.
public struct GenericPacketizer: RTPPacketizer {
    public let maxPayloadSize: Int
    public private(set) var nextFrameIndex: UInt16 = 0

    public init(maxPayloadSize: Int = defaultMaxPayloadSize) {
        precondition(maxPayloadSize > GenericPayloadHeader.size, "a generic payload has room for data")
        self.maxPayloadSize = maxPayloadSize
    }

    public mutating func packetize(_ frame: [UInt8]) throws(MediaError) -> [RTPPayloadChunk] {
        defer { nextFrameIndex = (nextFrameIndex + 1) & 0x3FFF }
        let room = maxPayloadSize - GenericPayloadHeader.size
        var chunks: [RTPPayloadChunk] = []
        var start = 0
        repeat {
            let end = min(frame.count, start + room)
            let header = GenericPayloadHeader(isFirst: start == 0, isLast: end == frame.count,
                                              frameIndex: nextFrameIndex)
            chunks.append(RTPPayloadChunk(payload: header.serialized() + frame[start..<end], marker: header.isLast))
            start = end
        } while start < frame.count
        return chunks
    }
}

/// Joins generic payloads into frames, checking F, L and the frame index.
public struct GenericDepacketizer: RTPDepacketizer {
    public init() {}

    public func startsFrame(_ payload: [UInt8]) -> Bool {
        (try? GenericPayloadHeader(parsing: payload))?.isFirst ?? false
    }

    /// Opaque frames carry no sign of dependence (raw pictures have none): each counts as a keyframe.
    public func isKeyframe(_ frame: [UInt8]) -> Bool { true }

    public mutating func depacketize(_ payloads: [[UInt8]]) throws(MediaError) -> [UInt8] {
        var frame: [UInt8] = []
        var index: UInt16?
        for (i, payload) in payloads.enumerated() {
            let header = try GenericPayloadHeader(parsing: payload)
            guard header.isFirst == (i == 0), header.isLast == (i == payloads.count - 1) else {
                throw MediaError(.malformed, "generic payload \(i) of \(payloads.count) has "
                                 + "F=\(header.isFirst) L=\(header.isLast)")
            }
            guard index == nil || index == header.frameIndex else {
                throw MediaError(.malformed,
                                 "generic payload \(i) belongs to frame \(header.frameIndex), not \(index!)")
            }
            index = header.frameIndex
            frame += payload[GenericPayloadHeader.size...]
        }
        guard index != nil else { throw MediaError(.malformed, "a generic frame has at least one packet") }
        return frame
    }
}
