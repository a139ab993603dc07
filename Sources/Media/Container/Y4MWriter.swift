// Writes Y4M (see Y4MHeader): the header line, then "FRAME\n" and the planes per frame.

/// Serializes a Y4M stream piece by piece.
public struct Y4MWriter: Sendable {
    public let header: Y4MHeader

    public init(header: Y4MHeader) {
        self.header = header
    }

    public func headerBytes() -> [UInt8] { header.serialized() }

    /// One frame; `precondition` that its size matches the header's.
    public func frameBytes(_ frame: VideoFrame) -> [UInt8] {
        precondition((try? header.frameSize()) == frame.bytes.count, "a Y4M frame has the header's frame size")
        return Y4MReader.frameMarker + [0x0A] + frame.bytes
    }

    public static func write(_ file: Y4MFile) -> [UInt8] {
        let writer = Y4MWriter(header: file.header)
        var out = writer.headerBytes()
        for frame in file.frames { out += writer.frameBytes(frame) }
        return out
    }
}
