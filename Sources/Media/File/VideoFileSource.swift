// Reading a video file frame by frame: the container is recognized by its first bytes (IVF
// "DKIF", Y4M "YUV4MPEG2", an Annex B start code) or, failing that, by the extension (.ivf,
// .y4m, .h264/.264), and the matching incremental reader is fed 1 MiB at a time, so memory
// stays proportional to one frame whatever the file's size. A file that does not parse gives
// a `VideoFileError` holding the reader's `MediaError` with the byte offset.

#if canImport(Glibc)
import Glibc
#endif

/// A video file's frames, read incrementally.
public struct VideoFileSource: Sendable {
    /// How many bytes each read asks for.
    public static let chunkSize = 1 << 20

    /// The file's path (or the name given to in-memory bytes).
    public let path: String
    /// The container, codec and time base, known once the header is read (at `init`).
    public private(set) var format: VideoStreamFormat
    /// Frames returned so far.
    public private(set) var framesRead = 0

    // Exactly one reader is set: optionals rather than an enum with payloads, so the reader is
    // advanced where it is stored (`reader?.next()`).
    private var ivf: IVFReader?
    private var annexB: AnnexBReader?
    private var y4m: Y4MReader?
    private let file: FileDescriptor?
    private var chunk: [UInt8] = []
    private var ended = false

    /// Opens `path`. `frameRate` is the nominal rate of raw H.264, which carries no timestamps.
    public init(path: String, frameRate: UInt32 = 30) throws(VideoFileError) {
        let file = try FileDescriptor(path: path, flags: O_RDONLY)
        var first: [UInt8] = []
        try file.read(into: &first, count: Self.chunkSize)
        try self.init(path: path, file: file, firstBytes: first, frameRate: frameRate)
    }

    /// Reads a file held in memory; `name` stands for its path (its extension counts).
    public init(bytes: [UInt8], name: String, frameRate: UInt32 = 30) throws(VideoFileError) {
        try self.init(path: name, file: nil, firstBytes: bytes, frameRate: frameRate)
    }

    private init(path: String, file: FileDescriptor?, firstBytes: [UInt8], frameRate: UInt32) throws(VideoFileError) {
        self.path = path
        self.file = file
        guard frameRate > 0 else { throw VideoFileError(.malformed, path: path, "the frame rate is positive") }
        let kind = try Self.recognize(firstBytes, path: path)
        switch kind {
        case .ivf: ivf = IVFReader()
        case .y4m: y4m = Y4MReader()
        case .annexB: annexB = AnnexBReader(frameRate: frameRate)
        }
        format = VideoStreamFormat(container: .annexB(frameRate: frameRate, per: 1))
        append(firstBytes)
        if file == nil || firstBytes.isEmpty { finishInput() }
        // IVF and Y4M begin with a header; Annex B's format is known already.
        switch kind {
        case .ivf, .y4m:
            guard let header = try pull() else {
                throw VideoFileError(.malformed, path: path, "the file ends before its header",
                                     mediaError: MediaError(.truncated, at: firstBytes.count, "no header"))
            }
            switch header {
            case .frame: break  // unreachable: headers come first
            case .ivfHeader(let h): format = VideoStreamFormat(container: .ivf(h))
            case .y4mHeader(let h): format = VideoStreamFormat(container: .y4m(h))
            }
        case .annexB:
            break
        }
    }

    private enum Kind { case ivf, annexB, y4m }

    private static func recognize(_ bytes: [UInt8], path: String) throws(VideoFileError) -> Kind {
        if bytes.starts(with: IVFHeader.signature) { return .ivf }
        if bytes.starts(with: Y4MHeader.signature) { return .y4m }
        if bytes.starts(with: [0, 0, 1]) || bytes.starts(with: [0, 0, 0, 1]) { return .annexB }
        // Not recognized by content: trust the extension, and let its reader say what is wrong.
        let lower = path.lowercased()
        if lower.hasSuffix(".ivf") { return .ivf }
        if lower.hasSuffix(".y4m") { return .y4m }
        if lower.hasSuffix(".h264") || lower.hasSuffix(".264") { return .annexB }
        throw VideoFileError(.unknownContainer, path: path,
                             "not an IVF, Y4M or H.264 Annex B file (by its first bytes or its extension)")
    }

    /// The next frame, or nil at the end of the file.
    public mutating func nextFrame() throws(VideoFileError) -> VideoFrame? {
        while let output = try pull() {
            if case .frame(let frame) = output {
                framesRead += 1
                return frame
            }
        }
        return nil
    }

    /// Reads every remaining frame.
    public mutating func readAll() throws(VideoFileError) -> [VideoFrame] {
        var frames: [VideoFrame] = []
        while let frame = try nextFrame() { frames.append(frame) }
        return frames
    }

    // MARK: Feeding the reader

    private enum Output {
        case ivfHeader(IVFHeader)
        case y4mHeader(Y4MHeader)
        case frame(VideoFrame)
    }

    /// The reader's next output, reading more of the file as needed; nil at the end.
    private mutating func pull() throws(VideoFileError) -> Output? {
        while true {
            do throws(MediaError) {
                if ivf != nil {
                    switch try ivf!.next() {
                    case .header(let h): return .ivfHeader(h)
                    case .frame(let f): return .frame(f)
                    case nil: break
                    }
                } else if annexB != nil {
                    if let unit = try annexB!.next() { return .frame(unit.frame) }
                } else {
                    switch try y4m!.next() {
                    case .header(let h): return .y4mHeader(h)
                    case .frame(let f): return .frame(f)
                    case nil: break
                    }
                }
            } catch {
                ended = true
                throw .malformed(path: path, error)
            }
            if ended { return nil }
            guard let file else {
                finishInput()
                continue
            }
            try file.read(into: &chunk, count: Self.chunkSize)
            if chunk.isEmpty { finishInput() } else { append(chunk) }
        }
    }

    private mutating func append(_ bytes: [UInt8]) {
        ivf?.append(bytes)
        annexB?.append(bytes)
        y4m?.append(bytes)
    }

    private mutating func finishInput() {
        ended = true
        ivf?.finish()
        annexB?.finish()
        y4m?.finish()
    }

    /// The format and every frame of a file.
    public static func read(path: String, frameRate: UInt32 = 30) throws(VideoFileError)
        -> (format: VideoStreamFormat, frames: [VideoFrame]) {
        var source = try VideoFileSource(path: path, frameRate: frameRate)
        let frames = try source.readAll()
        return (source.format, frames)
    }
}
