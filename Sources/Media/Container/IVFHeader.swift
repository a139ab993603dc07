// The IVF file header (libvpx `ivfenc`/`ivfdec`; no RFC — the de-facto layout ffmpeg and
// libvpx share). 32 bytes, little-endian:
//
//   0  'DKIF'        4  version (0)      6  header size (32)   8  FourCC
//   12 width (u16)   14 height (u16)     16 rate (time base denominator)
//   20 scale (time base numerator)       24 frame count      28 unused
//
// ffmpeg 5.1 writes a duration into "frame count", so readers must read frames to the end of
// the file rather than trust it.

import ZoneCore

/// The 32-byte header at the start of an IVF file.
public struct IVFHeader: Equatable, Sendable {
    public static let size = 32
    public static let signature: [UInt8] = Array("DKIF".utf8)

    public var version: UInt16
    /// The header size the file declares; frames start at this offset (at least 32).
    public var headerSize: UInt16
    public var fourCC: FourCC
    public var width: UInt16
    public var height: UInt16
    /// The time base denominator (frames per second for constant-rate files).
    public var rate: UInt32
    /// The time base numerator.
    public var scale: UInt32
    /// The frame count field; see the note at the top of the file.
    public var frameCount: UInt32
    /// The last four header bytes, kept so a rewritten file is byte-identical.
    public var unused: UInt32

    public init(fourCC: FourCC, width: UInt16, height: UInt16, rate: UInt32, scale: UInt32,
                frameCount: UInt32, version: UInt16 = 0, headerSize: UInt16 = 32, unused: UInt32 = 0) {
        self.version = version
        self.headerSize = headerSize
        self.fourCC = fourCC
        self.width = width
        self.height = height
        self.rate = rate
        self.scale = scale
        self.frameCount = frameCount
        self.unused = unused
    }

    /// The time base of the frames' timestamps: `scale / rate` seconds.
    public var timebase: Timebase { Timebase(numerator: scale, denominator: rate) }

    /// Parses the first 32 bytes of `bytes`.
    public init(parsing bytes: [UInt8]) throws(MediaError) {
        guard bytes.count >= Self.size else {
            throw MediaError(.truncated, at: bytes.count,
                             "IVF header needs \(Self.size) bytes, the input ends after \(bytes.count)")
        }
        guard Array(bytes[0..<4]) == Self.signature else {
            throw MediaError(.badMagic, at: 0, "IVF signature is not 'DKIF'")
        }
        var r = ByteReader(bytes, offset: 4, end: Self.size)
        do {
            version = try r.readUInt16LE()
            headerSize = try r.readUInt16LE()
            let cc = try r.readBytes(4)
            fourCC = FourCC(cc[cc.startIndex], cc[cc.startIndex + 1], cc[cc.startIndex + 2], cc[cc.startIndex + 3])
            width = try r.readUInt16LE()
            height = try r.readUInt16LE()
            rate = try r.readUInt32LE()
            scale = try r.readUInt32LE()
            frameCount = try r.readUInt32LE()
            unused = try r.readUInt32LE()
        } catch {
            throw MediaError(.truncated, at: error.offset, error.description)  // unreachable: 32 bytes checked
        }
        guard headerSize >= Self.size else {
            throw MediaError(.malformed, at: 6, "IVF header size \(headerSize) is smaller than 32")
        }
    }

    /// The 32 header bytes (a declared header size above 32 is padded with zeros by the writer).
    public func serialized() -> [UInt8] {
        var w = ByteWriter(capacity: Self.size)
        w.writeBytes(Self.signature)
        w.writeUInt16LE(version)
        w.writeUInt16LE(headerSize)
        w.writeBytes(fourCC.array)
        w.writeUInt16LE(width)
        w.writeUInt16LE(height)
        w.writeUInt32LE(rate)
        w.writeUInt32LE(scale)
        w.writeUInt32LE(frameCount)
        w.writeUInt32LE(unused)
        return w.bytes
    }
}
