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

    /// Room for `count` fields, when the parser knows how many lines a head has.
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public func values(_ name: String) -> [String] {
        var values: [String] = []
        for f in fields where f.name.caseInsensitiveEquals(name) { values.append(f.value) }
        return values
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
    /// Where a streamed body was written instead of `body` (the asset upload route), once complete.
    public var spooledBody: SpooledBody?

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

/// A request body the daemon wrote to a file as it arrived rather than holding it in memory. The
/// file is the daemon's: a handler may move it away (rename) or read it; whatever is left of it is
/// removed once the request is answered.
public struct SpooledBody: Sendable, Hashable {
    public var path: String
    public var length: Int

    public init(path: String, length: Int) {
        self.path = path
        self.length = length
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
    /// Written as bytes into one buffer sized up front: the daemon's event loop serializes every
    /// response it sends, one after another.
    public func serialized(keepAlive: Bool) -> [UInt8] {
        var out = head(keepAlive: keepAlive, reserving: body.count)
        out.append(contentsOf: body)
        return out
    }

    /// Bodies at least this large are sent apart from their head (`parts`) rather than copied after it.
    public static let separateBodyBytes = 64 * 1024

    /// What to send, in order: the serialized response, or for a large body its head and then the
    /// body itself, which the connection writes from where it is (an asset file is not copied to
    /// be put behind its head).
    public func parts(keepAlive: Bool) -> [[UInt8]] {
        body.count >= Self.separateBodyBytes ? [head(keepAlive: keepAlive, reserving: 0), body]
                                             : [serialized(keepAlive: keepAlive)]
    }

    /// The status line and headers, with Content-Length, in a buffer with room for `extra` more bytes.
    private func head(keepAlive: Bool, reserving extra: Int) -> [UInt8] {
        let reason = HTTPResponse.reason(status)
        var size = 64 + reason.utf8.count + extra
        for f in headers.fields { size += f.name.utf8.count + f.value.utf8.count + 4 }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        out.append(contentsOf: String(status).utf8)
        out.append(0x20)
        out.append(contentsOf: reason.utf8)
        out.append(contentsOf: "\r\n".utf8)
        for f in headers.fields {
            out.append(contentsOf: f.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: f.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "Content-Length: ".utf8)
        out.append(contentsOf: String(body.count).utf8)
        out.append(contentsOf: keepAlive ? "\r\n\r\n".utf8 : "\r\nConnection: close\r\n\r\n".utf8)
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
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + 20)
    out.append(contentsOf: String(bytes.count, radix: 16).utf8)
    out.append(contentsOf: "\r\n".utf8)
    out.append(contentsOf: bytes)
    out.append(contentsOf: "\r\n".utf8)
    return out
}
