// Checking that the frames a receiver got are the frames a sender sent: a CRC-32 per frame and
// a whole-stream digest, the MD5 of each frame's pts, length and CRC-32 in order, computed the
// same way on both sides and compared as text. Hashing the CRCs rather than the bytes keeps the
// cost per byte at CRC-32's (about 2.7 GB/s here, MD5 about 0.6 GB/s), which matters to a
// receiver checking a gigabit stream as it arrives; a changed frame still changes its CRC.
//
// H.264 needs one normalization: RTP carries NAL units without their start codes (RFC 6184
// §5.6), so a depacketized access unit has four-byte start codes where the file may have had
// three-byte ones. Frames of that codec are checksummed in that canonical form (NAL units each
// behind 00 00 00 01), which both the file's and the depacketized access units reduce to.

import ZoneCore

/// Per-frame CRC-32s and a whole-stream digest of a sequence of frames.
public struct FrameChecksum: Sendable {
    public let codec: VideoCodec
    /// The CRC-32 (ISO-HDLC) of each frame's bytes (canonical form), in order.
    public private(set) var frameCRCs: [UInt32] = []
    /// How many frame bytes were checksummed (canonical form).
    public private(set) var byteCount = 0
    private var stream = MD5()

    public init(codec: VideoCodec) {
        self.codec = codec
    }

    /// How many frames were added.
    public var frameCount: Int { frameCRCs.count }

    /// Adds the next frame.
    public mutating func add(_ frame: VideoFrame) {
        let bytes = Self.canonicalBytes(frame.bytes, codec: codec)
        let crc = CRC32.checksum(bytes)
        frameCRCs.append(crc)
        byteCount += bytes.count
        // pts (8 bytes), length (4) and CRC-32 (4), little-endian.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { record in
            for i in 0..<8 { record[i] = UInt8(truncatingIfNeeded: UInt64(bitPattern: frame.pts) >> (8 * i)) }
            for i in 0..<4 {
                record[8 + i] = UInt8(truncatingIfNeeded: UInt32(truncatingIfNeeded: bytes.count) >> (8 * i))
                record[12 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i))
            }
            stream.update(UnsafeRawBufferPointer(record))
        }
    }

    /// The whole-stream digest as 32 hex digits: equal digests mean equal frame count, pts,
    /// sizes and per-frame CRCs.
    public var digest: String {
        Hex.encode(stream.finalize())
    }

    /// The checksum of `frames`.
    public static func of(_ frames: [VideoFrame], codec: VideoCodec) -> FrameChecksum {
        var checksum = FrameChecksum(codec: codec)
        for frame in frames { checksum.add(frame) }
        return checksum
    }

    /// The bytes a frame is compared by: as is, except H.264 access units, rewritten with
    /// four-byte start codes (an access unit that does not parse is taken as is).
    public static func canonicalBytes(_ bytes: [UInt8], codec: VideoCodec) -> [UInt8] {
        guard codec == .h264, let units = try? AnnexBReader.read(bytes) else { return bytes }
        return AnnexBWriter.bytes(for: units.flatMap(\.nalUnits))
    }
}
