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
        }
    }

    public var description: String { message }
}

/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in, requests out. No I/O.
///
/// Feed bytes with `append`, then call `parseStep()` until it says `.needMore`. The state holds
/// exactly what is known: before the head, or the head parsed with so many body bytes to come.
public struct HTTPRequestParser: Sendable {
    public enum Step: Sendable, Hashable {
        case needMore
        case request(HTTPRequest)
    }

    enum State: Sendable {
        case head
        case body(HTTPRequest, length: Int)
    }

    public let maxHeadBytes: Int
    public let maxBodyBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var state = State.head
    /// Where the search for the end of the head resumes, so a slow head is not rescanned.
    private var scanFrom = 0

    public init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = 4 * 1024 * 1024) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Bytes received and not yet part of a returned request.
    public var bufferedBytes: Int { buffer.count - start }

    /// Whether a request has begun arriving (for the header-read timeout).
    public var isMidRequest: Bool {
        if case .body = state { return true }
        return bufferedBytes > 0
    }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 && start == buffer.count {
            // A connection that once carried a large body does not keep its buffer.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16 * 1024)
            start = 0
            scanFrom = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func parseStep() throws(HTTPParseError) -> Step {
        switch state {
        case .head:
            // Tolerate stray CRLFs before a request line (RFC 9112 §2.2).
            while start + 1 < buffer.count && buffer[start] == 13 && buffer[start + 1] == 10 { start += 2 }
            guard let end = try findHeadEnd() else {
                if buffer.count - start >= maxHeadBytes + 4 {
                    throw HTTPParseError(kind: .headersTooLarge,
                                         message: "request line and headers exceed \(maxHeadBytes) bytes")
                }
                return .needMore
            }
            if end - start > maxHeadBytes {
                throw HTTPParseError(kind: .headersTooLarge, message: "request line and headers exceed \(maxHeadBytes) bytes")
            }
            let request = try parseHead(buffer[start..<end])
            start = end + 4
            scanFrom = start
            if let te = request.headers["Transfer-Encoding"], !te.isEmpty {
                throw HTTPParseError(kind: .lengthRequired, message: "request bodies must carry Content-Length, not \(te)")
            }
            var length = 0
            let lengths = request.headers.values("Content-Length")
            if let first = lengths.first {
                guard lengths.allSatisfy({ $0 == first }), let n = Int(first.trimmingSpaces), n >= 0,
                      first.trimmingSpaces.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                    throw HTTPParseError(kind: .malformed, message: "bad Content-Length '\(first)'")
                }
                length = n
            }
            if length > maxBodyBytes {
                throw HTTPParseError(kind: .bodyTooLarge, message: "body of \(length) bytes exceeds \(maxBodyBytes)")
            }
            state = .body(request, length: length)
            return try parseStep()
        case .body(var request, let length):
            guard buffer.count - start >= length else { return .needMore }
            request.body = Array(buffer[start..<(start + length)])
            start += length
            scanFrom = start
            state = .head
            return .request(request)
        }
    }

    /// Finds the CRLF CRLF that ends the head. Lines end in CRLF only: a bare LF (or a CR not
    /// followed by LF) is refused as soon as it arrives (RFC 9112 §2.2 lets a server reject it),
    /// rather than waiting for a CRLF CRLF that such a client never sends.
    /// Looks no further than the largest head allowed, so whether a head is too large does not
    /// depend on how its bytes were split into reads.
    private mutating func findHeadEnd() throws(HTTPParseError) -> Int? {
        var i = max(start, scanFrom)
        let limit = min(buffer.count, start + maxHeadBytes + 4)
        while i < limit {
            let byte = buffer[i]
            if byte == 10 {
                guard i > start, buffer[i - 1] == 13 else {
                    throw HTTPParseError(kind: .malformed, message: "a line ends in a bare LF: lines end in CRLF")
                }
                if i - start >= 3 && buffer[i - 2] == 10 && buffer[i - 3] == 13 {
                    scanFrom = i + 1
                    return i - 3
                }
            } else if i > start && buffer[i - 1] == 13 {
                throw HTTPParseError(kind: .malformed, message: "a CR not followed by LF in the request head")
            }
            i += 1
        }
        scanFrom = limit
        return nil
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
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HTTPParseError(kind: .malformed,
                                     message: "header line without ':' '\(HTTPHeadBytes.text(line.prefix(100)))'")
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy({ $0 > 32 && $0 < 127 }) else {
                throw HTTPParseError(kind: .malformed, message: "bad header name '\(HTTPHeadBytes.text(name.prefix(100)))'")
            }
            headers.add(HTTPHeadBytes.text(name), HTTPHeadBytes.trimmedText(line[(colon + 1)...]))
        }
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
