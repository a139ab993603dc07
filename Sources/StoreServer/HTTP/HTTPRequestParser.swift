/// Why a request could not be read, with the status to answer it with.
public struct HTTPParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// 400: the request line or a header is malformed.
        case malformed
        /// 431: request line and headers exceed the limit.
        case headersTooLarge
        /// 413: the body exceeds the limit.
        case bodyTooLarge
        /// 411: a body without Content-Length (chunked request bodies are not accepted).
        case lengthRequired
        /// 505: not HTTP/1.x.
        case unsupportedVersion
        /// 400 (`limitExceeded`): a streamed body over Apple's Data Size Limits.
        case limitExceeded
    }

    public var kind: Kind
    public var message: String

    public var status: Int {
        switch kind {
        case .malformed: return 400
        case .headersTooLarge: return 431
        case .bodyTooLarge: return 413
        case .lengthRequired: return 411
        case .unsupportedVersion: return 505
        case .limitExceeded: return 400
        }
    }

    public var description: String { message }
}

/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in, requests out. No I/O.
///
/// Feed bytes with `append`, then call `parseStep()` until it says `.needMore`. The state holds
/// exactly what is known: before the head, the head parsed with so many body bytes to come, or a
/// streamed body with so many bytes to come.
///
/// A request the `streaming` policy names (the asset upload route) whose body is over the in-memory
/// limit is not held: its head comes out as `.streamedHead`, its body as `.bodyPart`s of whatever
/// has arrived, then `.bodyEnd`; the driver writes the parts where they belong.
public struct HTTPRequestParser: Sendable {
    public enum Step: Sendable, Hashable {
        case needMore
        case request(HTTPRequest)
        /// The head of a request whose body of `length` bytes follows as `.bodyPart`s and `.bodyEnd`.
        case streamedHead(HTTPRequest, length: Int)
        /// Bytes of a streamed body, in order.
        case bodyPart([UInt8])
        /// The streamed body is complete.
        case bodyEnd
    }

    /// Which requests may carry a body larger than `limits.maxBodyBytes`, and how large.
    public struct Streaming: Sendable, Hashable {
        /// Requests whose path begins with this are streamed when their body is over the in-memory limit.
        public var pathPrefix: String
        /// The largest streamed body; a larger one is refused from its head alone (400, `limitExceeded`).
        public var maxBytes: Int

        public init(pathPrefix: String, maxBytes: Int) {
            self.pathPrefix = pathPrefix
            self.maxBytes = maxBytes
        }
    }

    enum State: Sendable {
        /// Before a request's head.
        case head
        /// A head parsed; its body of `length` bytes is gathered in memory.
        case body(HTTPRequest, length: Int)
        /// A streamed body with `remaining` bytes still to come.
        case streamedBody(remaining: Int)
    }

    public let limits: HTTPMessageLimits
    public let streaming: Streaming?
    private var input = HTTPInputBuffer()
    private var state = State.head

    public init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = 4 * 1024 * 1024, streaming: Streaming? = nil) {
        self.init(limits: HTTPMessageLimits(maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes),
                  streaming: streaming)
    }

    public init(limits: HTTPMessageLimits, streaming: Streaming? = nil) {
        self.limits = limits
        self.streaming = streaming
    }

    public var maxHeadBytes: Int { limits.maxHeadBytes }
    public var maxBodyBytes: Int { limits.maxBodyBytes }

    /// Bytes received and not yet part of a returned request.
    public var bufferedBytes: Int { input.count }

    /// Whether a request has begun arriving (for the header-read timeout).
    public var isMidRequest: Bool {
        if case .head = state { return bufferedBytes > 0 }
        return true
    }

    /// Whether a streamed body is under way.
    public var isStreamingBody: Bool {
        if case .streamedBody = state { return true }
        return false
    }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        input.append(bytes)
    }

    public mutating func parseStep() throws(HTTPParseError) -> Step {
        switch state {
        case .head:
            input.skipEmptyLines()
            guard let end = try input.headEnd(maxHeadBytes: limits.maxHeadBytes, strictLineEnds: true) else {
                return .needMore
            }
            let request = try parseHead(input.bytes[input.start..<end])
            input.consume(upTo: end + 4)
            if let te = request.headers["Transfer-Encoding"], !te.isEmpty {
                throw HTTPParseError(kind: .lengthRequired, message: "request bodies must carry Content-Length, not \(te)")
            }
            let length = try HTTPMessageLimits.contentLength(request.headers.values("Content-Length")) ?? 0
            if length > limits.maxBodyBytes {
                guard let streaming, request.path.hasPrefix(streaming.pathPrefix) else {
                    throw HTTPParseError(kind: .bodyTooLarge,
                                         message: "body of \(length) bytes exceeds \(limits.maxBodyBytes)")
                }
                guard length <= streaming.maxBytes else {
                    throw HTTPParseError(kind: .limitExceeded,
                                         message: "a body of \(length) bytes is over the limit of \(streaming.maxBytes)")
                }
                state = .streamedBody(remaining: length)
                return .streamedHead(request, length: length)
            }
            state = .body(request, length: length)
            return try parseStep()
        case .body(var request, let length):
            guard input.count >= length else { return .needMore }
            request.body = input.take(length)
            state = .head
            return .request(request)
        case .streamedBody(let remaining):
            if remaining == 0 {
                state = .head
                return .bodyEnd
            }
            guard input.count > 0 else { return .needMore }
            let part = input.take(remaining)
            state = .streamedBody(remaining: remaining - part.count)
            return .bodyPart(part)
        }
    }

    private func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        guard HTTPHeadBytes.isUTF8(head) else {
            throw HTTPParseError(kind: .malformed, message: "request head is not valid UTF-8")
        }
        let lines = HTTPHeadBytes.lines(head, omittingEmpty: false)
        guard let requestLine = lines.first else { throw HTTPParseError(kind: .malformed, message: "empty request") }
        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[0].allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
            throw HTTPParseError(kind: .malformed,
                                 message: "malformed request line '\(HTTPHeadBytes.text(requestLine.prefix(100)))'")
        }
        let minor: Int
        if parts[2].elementsEqual("HTTP/1.1".utf8) {
            minor = 1
        } else if parts[2].elementsEqual("HTTP/1.0".utf8) {
            minor = 0
        } else {
            throw HTTPParseError(kind: .unsupportedVersion,
                                 message: "unsupported protocol '\(HTTPHeadBytes.text(parts[2].prefix(20)))'")
        }
        guard parts[1].first == UInt8(ascii: "/") || parts[1].elementsEqual("*".utf8) else {
            throw HTTPParseError(kind: .malformed, message: "request target must be a path")
        }
        let headers = try HTTPHeadBytes.headers(lines.dropFirst(), maxCount: limits.maxHeaderCount,
                                                validatingNames: true)
        if minor == 1 && headers["Host"] == nil {
            throw HTTPParseError(kind: .malformed, message: "HTTP/1.1 request without Host header")
        }
        return HTTPRequest(method: HTTPHeadBytes.text(parts[0]), target: HTTPHeadBytes.text(parts[1]),
                           minorVersion: minor, headers: headers)
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
