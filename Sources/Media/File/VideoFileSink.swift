// Writing frames back into a container: the header of the stream's format, then each frame as
// the container stores it (IVF: 12-byte frame header with the pts; Annex B: the access unit's
// bytes; Y4M: "FRAME\n" and the planes). Writes go through a buffer, so a frame costs no system
// call of its own. At `finish` an IVF header is written again with the number of frames written
// (what libvpx puts there) and, if the format gave no size, the size the first VP8 keyframe
// declared.

#if canImport(Glibc)
import Glibc
#endif

/// Writes a stream's frames to a file in its container.
public struct VideoFileSink: Sendable {
    /// Bytes gathered before a write(2).
    public static let bufferSize = 1 << 20

    public let path: String
    /// The format written; an IVF header's frame count and size are updated at `finish`.
    public private(set) var format: VideoStreamFormat
    public private(set) var framesWritten = 0
    /// Bytes of frame data written (without container framing).
    public private(set) var frameBytesWritten = 0

    private let file: FileDescriptor
    private var buffer: [UInt8] = []
    private var finished = false

    /// Creates (or truncates) `path` and writes the container header.
    public init(path: String, format: VideoStreamFormat) throws(VideoFileError) {
        self.path = path
        self.format = format
        file = try FileDescriptor(path: path, flags: O_WRONLY | O_CREAT | O_TRUNC)
        buffer.reserveCapacity(Self.bufferSize)
        buffer += Self.headerBytes(format)
    }

    /// The bytes a file of `format` begins with.
    public static func headerBytes(_ format: VideoStreamFormat) -> [UInt8] {
        switch format.container {
        case .ivf(let header): IVFWriter(header: header).headerBytes()
        case .annexB: []
        case .y4m(let header): header.serialized()
        }
    }

    /// Appends one frame.
    public mutating func write(_ frame: VideoFrame) throws(VideoFileError) {
        precondition(!finished, "a finished sink takes no more frames")
        switch format.container {
        case .ivf(var header):
            precondition(frame.bytes.count <= Int(UInt32.max), "an IVF frame is at most 4 GiB")
            if header.width == 0 && header.height == 0, let size = VP8KeyframeHeader(frame: frame.bytes),
               header.fourCC == .vp8 {
                header.width = size.width
                header.height = size.height
                format.container = .ivf(header)
            }
            appendLE(UInt32(frame.bytes.count))
            appendLE(UInt64(bitPattern: frame.pts))
        case .annexB:
            break
        case .y4m(let header):
            let size = (try? header.frameSize()) ?? -1
            guard frame.bytes.count == size else {
                throw VideoFileError(.frameMismatch, path: path,
                                     "a frame of \(frame.bytes.count) bytes does not fit Y4M frames of \(size) bytes")
            }
            buffer += Y4MReader.frameMarker
            buffer.append(0x0A)
        }
        if buffer.count + frame.bytes.count > Self.bufferSize {
            try flush()
            if frame.bytes.count >= Self.bufferSize {
                try file.write(frame.bytes)
                count(frame)
                return
            }
        }
        buffer += frame.bytes
        count(frame)
    }

    private mutating func count(_ frame: VideoFrame) {
        framesWritten += 1
        frameBytesWritten += frame.bytes.count
    }

    private mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        for i in 0..<(T.bitWidth / 8) { buffer.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    /// Writes what is buffered.
    public mutating func flush() throws(VideoFileError) {
        guard !buffer.isEmpty else { return }
        try file.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and completes the header. The file is closed when the sink goes.
    public mutating func finish() throws(VideoFileError) {
        try flush()
        finished = true
        guard case .ivf(var header) = format.container else { return }
        header.frameCount = UInt32(clamping: framesWritten)
        format.container = .ivf(header)
        try file.write(header.serialized(), at: 0)
    }

    /// A whole file's bytes, for tests and in-memory use.
    public static func bytes(format: VideoStreamFormat, frames: [VideoFrame]) -> [UInt8] {
        switch format.container {
        case .ivf(var header):
            header.frameCount = UInt32(clamping: frames.count)
            return IVFWriter.write(IVFFile(header: header, frames: frames))
        case .annexB:
            return frames.flatMap(\.bytes)
        case .y4m(let header):
            return Y4MWriter.write(Y4MFile(header: header, frames: frames))
        }
    }
}
