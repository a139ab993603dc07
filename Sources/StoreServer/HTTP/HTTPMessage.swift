/// An HTTP/1.1 header field list, looked up case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for f in fields { hasher.combine(f.name); hasher.combine(f.value) }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> { fields.makeIterator() }
}

extension String {
    /// Field names compare ASCII case-insensitively (RFC 9110 §5.1): only the letters A–Z fold to
    /// a–z. Setting bit 0x20 on any byte would also make `@` equal `` ` `` and `[` equal `{`.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in Self.asciiLowercased(x) == Self.asciiLowercased(y) }
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}

/// A parsed HTTP/1.1 request.
public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    /// The request target as sent (`/path?query`).
    public var target: String
    /// `1.0` or `1.1`.
    public var minorVersion: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String, target: String, minorVersion: Int = 1, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The path without the query. Looked at as bytes: a request's target is ASCII, and walking it
    /// as `Character`s costs grapheme breaking on every request.
    public var path: String {
        let bytes = target.utf8
        guard let q = bytes.firstIndex(of: UInt8(ascii: "?")) else { return target }
        return String(target[..<q])
    }

    /// Whether the connection stays open after the response (RFC 9112 §9.3).
    public var keepAlive: Bool {
        let connection = headers["Connection"]?.lowercased() ?? ""
        if minorVersion == 0 { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }
}

/// An HTTP/1.1 response with a complete body.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    public static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
    }

    /// Serializes with Content-Length (and `Connection: close` when asked).
    public func serialized(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for f in headers.fields { head += "\(f.name): \(f.value)\r\n" }
        head += "Content-Length: \(body.count)\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        var out = Array(head.utf8)
        out.reserveCapacity(out.count + body.count)
        out.append(contentsOf: body)
        return out
    }

    /// The reason phrases of the statuses we send.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 303: return "See Other"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 421: return "Misdirected Request"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }
}

/// One chunk of a chunked response body (RFC 9112 §7.1); an empty chunk ends the body.
public func httpChunk(_ bytes: [UInt8]) -> [UInt8] {
    var out = Array((String(bytes.count, radix: 16) + "\r\n").utf8)
    out.append(contentsOf: bytes)
    out.append(contentsOf: [13, 10])
    return out
}
