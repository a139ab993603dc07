// An incremental IVF reader: feed bytes in any split, pull the header and then frames. Each
// frame is a 12-byte header (size u32 LE, pts u64 LE) and `size` bytes; frames run to the end of
// the input (the header's frame count is not trusted, see IVFHeader).

/// What an `IVFReader` produces, in order: one header, then frames.
public enum IVFReaderOutput: Equatable, Sendable {
    /// The file header (always first).
    case header(IVFHeader)
    /// One frame, its bytes and its pts in the header's time base.
    case frame(VideoFrame)
}

/// A whole IVF file: its header and every frame.
public struct IVFFile: Equatable, Sendable {
    public var header: IVFHeader
    public var frames: [VideoFrame]

    public init(header: IVFHeader, frames: [VideoFrame]) {
        self.header = header
        self.frames = frames
    }
}

/// Reads IVF incrementally (sans-I/O): `append` bytes and call `next()` until it returns nil;
/// at end of input call `finish()` and drain `next()` once more, which throws if the input
/// ended inside the header or a frame.
public struct IVFReader: Sendable {
    /// Frames larger than this are rejected as absurd before any allocation.
    public var maxFrameSize: Int

    private enum State: Sendable {
        /// Waiting for the 32-byte header.
        case header
        /// Skipping the bytes between byte 32 and the declared header size.
        case headerPadding(remaining: Int)
        /// Waiting for the 12-byte frame header.
        case frameHeader
        /// Waiting for `size` frame bytes; `headerOffset` is where the frame header began.
        case frameBody(size: Int, pts: Int64, headerOffset: Int)
    }

    private var state = State.header
    private var input = InputBuffer()
    private var ended = false

    public init(maxFrameSize: Int = 16 << 20) {
        self.maxFrameSize = maxFrameSize
    }

    /// Adds bytes from the input, in any split.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        input.append(bytes)
    }

    /// The next header or frame, or nil if more bytes are needed.
    public mutating func next() throws(MediaError) -> IVFReaderOutput? {
        while true {
            switch state {
            case .header:
                guard input.count >= IVFHeader.size else { return try needMore() }
                let header = try IVFHeader(parsing: input.take(IVFHeader.size))
                state = .headerPadding(remaining: Int(header.headerSize) - IVFHeader.size)
                return .header(header)
            case .headerPadding(let remaining):
                let n = min(remaining, input.count)
                input.skip(n)
                if remaining - n > 0 {
                    state = .headerPadding(remaining: remaining - n)
                    return try needMore()
                }
                state = .frameHeader
            case .frameHeader:
                guard input.count >= 12 else { return try needMore() }
                let offset = input.offset
                let size = Int(input.uint32LE(at: 0))
                let pts = Int64(bitPattern: input.uint64LE(at: 4))
                guard size <= maxFrameSize else {
                    throw MediaError(.tooLarge, at: offset,
                                     "IVF frame size \(size) exceeds the limit of \(maxFrameSize) bytes")
                }
                input.skip(12)
                state = .frameBody(size: size, pts: pts, headerOffset: offset)
            case .frameBody(let size, let pts, _):
                guard input.count >= size else { return try needMore() }
                state = .frameHeader
                return .frame(VideoFrame(bytes: input.take(size), pts: pts))
            }
        }
    }

    /// Declares the end of input: `next()` then throws instead of waiting for more bytes.
    public mutating func finish() {
        ended = true
    }

    /// Nil while more input may come; at the end of input, the error for what is missing.
    private func needMore() throws(MediaError) -> IVFReaderOutput? {
        guard ended else { return nil }
        switch state {
        case .header:
            throw MediaError(.truncated, at: input.offset + input.count,
                             "IVF header needs 32 bytes, the input ends after \(input.count)")
        case .headerPadding(let remaining):
            throw MediaError(.truncated, at: input.offset + input.count,
                             "IVF header ends \(remaining) bytes before its declared size")
        case .frameHeader:
            if input.count > 0 {
                throw MediaError(.truncated, at: input.offset,
                                 "IVF frame header needs 12 bytes, the input ends after \(input.count)")
            }
            return nil
        case .frameBody(let size, _, let headerOffset):
            throw MediaError(.truncated, at: headerOffset,
                             "IVF frame of \(size) bytes at offset \(headerOffset) runs beyond the end of "
                             + "the input (\(input.count) of its bytes present)")
        }
    }

    /// Reads a whole file at once.
    public static func read(_ bytes: [UInt8], maxFrameSize: Int = 16 << 20) throws(MediaError) -> IVFFile {
        var reader = IVFReader(maxFrameSize: maxFrameSize)
        reader.append(bytes)
        var header: IVFHeader?
        var frames: [VideoFrame] = []
        reader.finish()
        while let output = try reader.next() {
            switch output {
            case .header(let h): header = h
            case .frame(let f): frames.append(f)
            }
        }
        guard let header else { throw MediaError(.truncated, at: 0, "IVF input has no header") }
        return IVFFile(header: header, frames: frames)
    }
}
