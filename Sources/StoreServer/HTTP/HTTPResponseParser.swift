/// An incremental HTTP/1.1 response parser for our client (RFC 9112): Content-Length and
/// chunked bodies; for a chunked stream, chunks are handed out as they complete.
public struct HTTPResponseParser: Sendable {
    public struct Head: Sendable, Hashable {
        public var status: Int
        public var headers: HTTPHeaders
    }

    public enum Step: Sendable, Hashable {
        case needMore
        /// A complete response with its body.
        case response(Head, [UInt8])
        /// The head of a chunked response; the body follows as `.chunk`s and `.end`.
        case streamHead(Head)
        case chunk([UInt8])
        case end
    }

    enum State: Sendable {
        case head
        case fixed(Head, length: Int)
        case chunked(Head, streaming: Bool, collected: [UInt8])
        case chunkData(Head, streaming: Bool, collected: [UInt8], remaining: Int)
    }

    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    private var input = HTTPInputBuffer()
    private var state = State.head
    /// Bytes examined while looking for the ends of heads and chunk-size lines; linear in the
    /// input however its reads were split.
    var bytesScanned: Int { input.bytesScanned }
    static let maxChunkSizeLineBytes = HTTPMessageLimits.maxChunkSizeLineBytes
    /// A response head and header count this client takes, and the largest body (or, in an event
    /// stream, the largest chunk): a server, or whatever answers at its address, cannot make the
    /// client hold more. 64 MiB is above the store's answers (records are at most 1 MB, requests
    /// at most 4 MB, an asset download is its file of at most 50 MB).
    public var limits = HTTPMessageLimits(maxHeadBytes: 64 * 1024, maxHeaderCount: 1024, maxBodyBytes: 64 << 20)
    public var maxBodyBytes: Int {
        get { limits.maxBodyBytes }
        set { limits.maxBodyBytes = newValue }
    }
    /// Chunked responses whose content type is an event stream are handed out chunk by chunk.
    public var streamContentTypes = ["text/event-stream"]

    public init() {}

    /// Whether bytes of a response not yet handed out are held.
    public var hasBufferedBytes: Bool { input.count > 0 }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        input.append(bytes)
    }

    public mutating func parseStep() throws(ParseError) -> Step {
        do {
            return try step()
        } catch {
            throw ParseError(description: error.message)
        }
    }

    private mutating func step() throws(HTTPParseError) -> Step {
        switch state {
        case .head:
            guard let end = try input.headEnd(maxHeadBytes: limits.maxHeadBytes, strictLineEnds: false) else {
                return .needMore
            }
            let headBytes = input.bytes[input.start..<end]
            guard HTTPHeadBytes.isUTF8(headBytes) else { throw Self.error("response head is not UTF-8") }
            input.consume(upTo: end + 4)
            let lines = HTTPHeadBytes.lines(headBytes, omittingEmpty: true)
            guard let first = lines.first else { throw Self.error("empty response head") }
            let statusLine = first.split(separator: 0x20, maxSplits: 2)
            guard statusLine.count >= 2, statusLine[0].starts(with: "HTTP/1.".utf8),
                  let status = Int(HTTPHeadBytes.text(statusLine[1])) else {
                throw Self.error("bad status line")
            }
            let headers = try HTTPHeadBytes.headers(lines.dropFirst(), maxCount: limits.maxHeaderCount,
                                                    validatingNames: false)
            let head = Head(status: status, headers: headers)
            if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
                let type = headers["Content-Type"]?.lowercased() ?? ""
                let streaming = streamContentTypes.contains { type.hasPrefix($0) }
                state = .chunked(head, streaming: streaming, collected: [])
                if streaming { return .streamHead(head) }
            } else {
                let length = try HTTPMessageLimits.contentLength(headers.values("Content-Length")) ?? 0
                guard length <= maxBodyBytes else {
                    throw Self.error("a body of \(length) bytes is over the \(maxBodyBytes) this client takes")
                }
                state = .fixed(head, length: length)
            }
            return try step()
        case .fixed(let head, let length):
            guard input.count >= length else { return .needMore }
            let body = input.take(length)
            state = .head
            return .response(head, body)
        case .chunked(let head, let streaming, let collected):
            guard let lineEnd = try input.lineEnd(maxLineBytes: Self.maxChunkSizeLineBytes) else { return .needMore }
            let line = input.bytes[input.start..<lineEnd]
            guard let size = HTTPMessageLimits.chunkSize(line) else {
                throw Self.error("bad chunk size '\(HTTPHeadBytes.text(line.prefix(20)))'")
            }
            // Compared by subtraction: `collected.count` is ours and ≤ the cap, `size` may be anything.
            guard size <= maxBodyBytes - collected.count else {
                throw Self.error(streaming
                    ? "a chunk of \(size) bytes is over the \(maxBodyBytes) this client takes"
                    : "a body of over \(maxBodyBytes) bytes is more than this client takes")
            }
            if size == 0 {
                // Trailers are not used; expect the final CRLF.
                guard input.count - (lineEnd + 2 - input.start) >= 2 else { return .needMore }
                input.consume(upTo: lineEnd + 4)
                state = .head
                return streaming ? .end : .response(head, collected)
            }
            input.consume(upTo: lineEnd + 2)
            state = .chunkData(head, streaming: streaming, collected: collected, remaining: size)
            return try step()
        case .chunkData(let head, let streaming, var collected, let remaining):
            // `remaining` is the server's number: compared, never added to, so a huge size cannot trap.
            guard input.count - 2 >= remaining else { return .needMore }
            let data = input.take(remaining)
            input.consume(upTo: input.start + 2)
            if streaming {
                state = .chunked(head, streaming: true, collected: [])
                return .chunk(data)
            }
            collected.append(contentsOf: data)
            state = .chunked(head, streaming: false, collected: collected)
            return try step()
        }
    }

    private static func error(_ message: String) -> HTTPParseError {
        HTTPParseError(kind: .malformed, message: message)
    }
}
