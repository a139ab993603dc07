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

    private var buffer: [UInt8] = []
    private var start = 0
    private var state = State.head
    /// Where the search for the CRLF (CRLF) that ends the head or a chunk-size line resumes: bytes
    /// before it were searched already, so a head arriving a byte at a time costs linear time.
    private var scanFrom = 0
    /// Bytes examined while looking for the ends of heads and chunk-size lines; linear in the
    /// input however its reads were split.
    private(set) var bytesScanned = 0
    /// A chunk-size line (RFC 9112 §7.1) is a hex number and optional extensions: one this long
    /// without its CRLF is not a chunk-size line.
    static let maxChunkSizeLineBytes = 1024
    /// The largest body (or, in an event stream, the largest chunk) taken in: a server, or whatever
    /// answers at its address, cannot make the client hold more. 64 MiB is far above the store's
    /// answers (records are at most 1 MB, requests at most 4 MB).
    public var maxBodyBytes = 64 << 20
    /// Chunked responses whose content type is an event stream are handed out chunk by chunk.
    public var streamContentTypes = ["text/event-stream"]

    public init() {}

    /// Whether bytes of a response not yet handed out are held.
    public var hasBufferedBytes: Bool { buffer.count > start }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanFrom = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func parseStep() throws(ParseError) -> Step {
        switch state {
        case .head:
            guard let end = find([13, 10, 13, 10]) else {
                if buffer.count - start > 64 * 1024 { throw ParseError(description: "response head too large") }
                return .needMore
            }
            let headBytes = buffer[start..<end]
            guard HTTPHeadBytes.isUTF8(headBytes) else { throw ParseError(description: "response head is not UTF-8") }
            start = end + 4
            let lines = HTTPHeadBytes.lines(headBytes, omittingEmpty: true)
            guard let first = lines.first else { throw ParseError(description: "empty response head") }
            let statusLine = first.split(separator: 0x20, maxSplits: 2)
            guard statusLine.count >= 2, statusLine[0].starts(with: "HTTP/1.".utf8),
                  let status = Int(HTTPHeadBytes.text(statusLine[1])) else {
                throw ParseError(description: "bad status line")
            }
            var headers = HTTPHeaders()
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                    throw ParseError(description: "bad header line")
                }
                headers.add(HTTPHeadBytes.text(line[..<colon]), HTTPHeadBytes.trimmedText(line[(colon + 1)...]))
            }
            let head = Head(status: status, headers: headers)
            if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
                let type = headers["Content-Type"]?.lowercased() ?? ""
                let streaming = streamContentTypes.contains { type.hasPrefix($0) }
                state = .chunked(head, streaming: streaming, collected: [])
                if streaming { return .streamHead(head) }
            } else {
                let length = Int(headers["Content-Length"] ?? "0") ?? -1
                guard length >= 0 else { throw ParseError(description: "bad Content-Length") }
                guard length <= maxBodyBytes else {
                    throw ParseError(description: "a body of \(length) bytes is over the \(maxBodyBytes) this client takes")
                }
                state = .fixed(head, length: length)
            }
            return try parseStep()
        case .fixed(let head, let length):
            guard buffer.count - start >= length else { return .needMore }
            let body = Array(buffer[start..<(start + length)])
            start += length
            state = .head
            return .response(head, body)
        case .chunked(let head, let streaming, let collected):
            guard let lineEnd = find([13, 10]) else {
                if buffer.count - start > Self.maxChunkSizeLineBytes {
                    throw ParseError(description: "chunk-size line longer than \(Self.maxChunkSizeLineBytes) bytes")
                }
                return .needMore
            }
            let lineStart = start
            let sizeText = String(decoding: buffer[start..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map { String($0).trimmingSpaces } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw ParseError(description: "bad chunk size '\(sizeText.prefix(20))'")
            }
            // Compared by subtraction: `collected.count` is ours and ≤ the cap, `size` may be anything.
            guard size <= maxBodyBytes - collected.count else {
                throw ParseError(description: streaming
                    ? "a chunk of \(size) bytes is over the \(maxBodyBytes) this client takes"
                    : "a body of over \(maxBodyBytes) bytes is more than this client takes")
            }
            start = lineEnd + 2
            if size == 0 {
                // Trailers are not used; expect the final CRLF.
                guard buffer.count - start >= 2 else {
                    start = lineStart
                    return .needMore
                }
                start += 2
                state = .head
                return streaming ? .end : .response(head, collected)
            }
            state = .chunkData(head, streaming: streaming, collected: collected, remaining: size)
            return try parseStep()
        case .chunkData(let head, let streaming, var collected, let remaining):
            // `remaining` is the server's number: compared, never added to, so a huge size cannot trap.
            guard buffer.count - start - 2 >= remaining else { return .needMore }
            let data = Array(buffer[start..<(start + remaining)])
            start += remaining + 2
            if streaming {
                state = .chunked(head, streaming: true, collected: [])
                return .chunk(data)
            }
            collected.append(contentsOf: data)
            state = .chunked(head, streaming: false, collected: collected)
            return try parseStep()
        }
    }

    /// The first `pattern` at or after `start`. Resumes where the last unsuccessful search
    /// stopped; the state asks for one pattern until it is found, and `start` moves past a match.
    private mutating func find(_ pattern: [UInt8]) -> Int? {
        var i = max(start, scanFrom)
        while i + pattern.count <= buffer.count {
            bytesScanned &+= 1
            if buffer[i] == pattern[0] && buffer[i..<(i + pattern.count)].elementsEqual(pattern) { return i }
            i += 1
        }
        scanFrom = max(start, i)
        return nil
    }
}
