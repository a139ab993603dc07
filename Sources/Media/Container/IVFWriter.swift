// Writes IVF (see IVFHeader for the layout): the header, then per frame a 12-byte frame header
// and the frame's bytes. Sans-I/O: it returns bytes for the caller to write.

import ZoneCore

/// Serializes an IVF file piece by piece.
public struct IVFWriter: Sendable {
    public let header: IVFHeader

    public init(header: IVFHeader) {
        self.header = header
    }

    /// The header bytes, padded with zeros to the declared header size.
    public func headerBytes() -> [UInt8] {
        header.serialized() + [UInt8](repeating: 0, count: Int(header.headerSize) - IVFHeader.size)
    }

    /// One frame's bytes: size (u32 LE), pts (u64 LE), data.
    public func frameBytes(_ frame: VideoFrame) -> [UInt8] {
        precondition(frame.bytes.count <= Int(UInt32.max), "an IVF frame is at most 4 GiB")
        var w = ByteWriter(capacity: 12 + frame.bytes.count)
        w.writeUInt32LE(UInt32(frame.bytes.count))
        w.writeUInt64LE(UInt64(bitPattern: frame.pts))
        w.writeBytes(frame.bytes)
        return w.bytes
    }

    /// A whole file.
    public static func write(_ file: IVFFile) -> [UInt8] {
        let writer = IVFWriter(header: file.header)
        var out = writer.headerBytes()
        for frame in file.frames { out += writer.frameBytes(frame) }
        return out
    }
}
