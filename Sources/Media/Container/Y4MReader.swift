// An incremental Y4M reader (see Y4MHeader for the format): the header line, then per frame a
// "FRAME[ params]\n" line and the raw planes. Frames are opaque to ZoneRTC; their pts is the
// frame index in the header's time base.

/// What a `Y4MReader` produces, in order: one header, then frames.
public enum Y4MReaderOutput: Equatable, Sendable {
    /// The stream header (always first).
    case header(Y4MHeader)
    /// One picture's planes; pts is the frame index. FRAME-line parameters are not kept.
    case frame(VideoFrame)
}

/// A whole Y4M stream.
public struct Y4MFile: Equatable, Sendable {
    public var header: Y4MHeader
    public var frames: [VideoFrame]

    public init(header: Y4MHeader, frames: [VideoFrame]) {
        self.header = header
        self.frames = frames
    }
}

/// Reads Y4M incrementally (sans-I/O), like `IVFReader`: `append`, `next()`, `finish()`.
public struct Y4MReader: Sendable {
    public static let frameMarker: [UInt8] = Array("FRAME".utf8)

    private enum State: Sendable {
        /// Waiting for the header line.
        case header
        /// Waiting for a "FRAME…\n" line; frames have `frameSize` bytes.
        case frameLine(frameSize: Int)
        /// Waiting for a frame's planes; its line began at `lineOffset`.
        case frameBody(frameSize: Int, lineOffset: Int)
    }

    private var state = State.header
    private var input = InputBuffer()
    private var ended = false
    private var count: Int64 = 0
    /// How far the current line has been searched for "\n".
    private var scanned = 0

    public init() {}

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        input.append(bytes)
    }

    /// Declares the end of input: `next()` then throws instead of waiting for more bytes.
    public mutating func finish() {
        ended = true
    }

    /// The length of the line at the head (without "\n"), nil if incomplete.
    private mutating func lineLength() throws(MediaError) -> Int? {
        while scanned < input.count {
            if input[scanned] == 0x0A {
                let n = scanned
                scanned = 0
                return n
            }
            scanned += 1
            if scanned > Y4MHeader.maxLineLength {
                throw MediaError(.tooLarge, at: input.offset, "Y4M line longer than \(Y4MHeader.maxLineLength) bytes")
            }
        }
        return nil
    }

    public mutating func next() throws(MediaError) -> Y4MReaderOutput? {
        while true {
            switch state {
            case .header:
                // Reject a wrong signature as soon as its bytes are here, not at the first "\n".
                let have = min(input.count, Y4MHeader.signature.count)
                if input.bytes(0..<have) != Array(Y4MHeader.signature[0..<have]) {
                    throw MediaError(.badMagic, at: input.offset, "Y4M signature is not 'YUV4MPEG2'")
                }
                guard let n = try lineLength() else { return try needMore() }
                let offset = input.offset
                let header = try Y4MHeader(line: input.bytes(0..<n), offset: offset)
                input.skip(n + 1)
                state = .frameLine(frameSize: try header.frameSize(offset: offset))
                return .header(header)
            case .frameLine(let frameSize):
                let have = min(input.count, Self.frameMarker.count)
                if input.bytes(0..<have) != Array(Self.frameMarker[0..<have]) {
                    throw MediaError(.badMagic, at: input.offset, "Y4M frame does not begin with 'FRAME'")
                }
                guard let n = try lineLength() else { return try needMore() }
                let offset = input.offset
                input.skip(n + 1)
                state = .frameBody(frameSize: frameSize, lineOffset: offset)
            case .frameBody(let frameSize, _):
                guard input.count >= frameSize else { return try needMore() }
                state = .frameLine(frameSize: frameSize)
                defer { count += 1 }
                return .frame(VideoFrame(bytes: input.take(frameSize), pts: count))
            }
        }
    }

    private func needMore() throws(MediaError) -> Y4MReaderOutput? {
        guard ended else { return nil }
        switch state {
        case .header:
            throw MediaError(.truncated, at: input.offset + input.count, "Y4M header line is not terminated")
        case .frameLine:
            if input.count == 0 { return nil }
            throw MediaError(.truncated, at: input.offset, "Y4M FRAME line is not terminated")
        case .frameBody(let frameSize, let lineOffset):
            throw MediaError(.truncated, at: lineOffset,
                             "Y4M frame of \(frameSize) bytes at offset \(lineOffset) runs beyond the end of "
                             + "the input (\(input.count) of its bytes present)")
        }
    }

    /// Reads a whole stream at once.
    public static func read(_ bytes: [UInt8]) throws(MediaError) -> Y4MFile {
        var reader = Y4MReader()
        reader.append(bytes)
        reader.finish()
        var header: Y4MHeader?
        var frames: [VideoFrame] = []
        while let output = try reader.next() {
            switch output {
            case .header(let h): header = h
            case .frame(let f): frames.append(f)
            }
        }
        guard let header else { throw MediaError(.truncated, at: 0, "Y4M input has no header") }
        return Y4MFile(header: header, frames: frames)
    }
}
