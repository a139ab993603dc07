// The start of a VP8 frame (RFC 6386 §9.1): a 3-byte frame tag whose lowest bit is 0 for a
// keyframe; a keyframe then has the start code 9D 01 2A and two 16-bit little-endian fields,
// each a 14-bit dimension and a 2-bit scale. Used to learn a stream's size from its frames when
// nobody said it (an IVF header written for frames that came over RTP).

/// The picture size a VP8 keyframe declares.
public struct VP8KeyframeHeader: Equatable, Sendable {
    public var width: UInt16
    public var height: UInt16

    /// The size declared by `frame` if it is a keyframe, nil otherwise.
    public init?(frame: [UInt8]) {
        guard frame.count >= 10, frame[0] & 0x01 == 0,
              frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A else { return nil }
        width = (UInt16(frame[6]) | UInt16(frame[7]) << 8) & 0x3FFF
        height = (UInt16(frame[8]) | UInt16(frame[9]) << 8) & 0x3FFF
    }
}
