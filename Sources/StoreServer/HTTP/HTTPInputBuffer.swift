/// The bytes an HTTP/1.1 parser has received and not yet consumed: the one home of the request and
/// response parsers' buffering. Searches for the end of a head or of a line resume where the last
/// unsuccessful one stopped, so a head arriving a byte at a time costs linear time; consumed bytes
/// are dropped once everything is consumed, so a connection that once carried a large message
/// does not keep its buffer.
struct HTTPInputBuffer: Sendable {
    private(set) var bytes: [UInt8] = []
    /// The first byte not consumed.
    private(set) var start = 0
    /// Where the search for a head's or line's end resumes; bytes before it were searched already.
    private var scanFrom = 0
    /// Bytes examined while looking for the ends of heads and lines: linear in the input however
    /// its reads were split.
    private(set) var bytesScanned = 0

    /// Bytes received and not yet consumed.
    var count: Int { bytes.count - start }

    mutating func append<C: Collection>(_ more: C) where C.Element == UInt8 {
        if start > 0 && start == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024)
            start = 0
            scanFrom = 0
        }
        bytes.append(contentsOf: more)
    }

    /// Consumes `n` bytes (at most `count`) and returns them.
    mutating func take(_ n: Int) -> [UInt8] {
        let end = start + min(n, count)
        defer { consume(upTo: end) }
        return Array(bytes[start..<end])
    }

    /// Consumes everything before `index`.
    mutating func consume(upTo index: Int) {
        start = min(max(start, index), bytes.count)
        scanFrom = max(scanFrom, start)
    }

    /// Skips CRLFs before a start line (RFC 9112 §2.2 lets a server ignore them).
    mutating func skipEmptyLines() {
        while start + 1 < bytes.count && bytes[start] == 13 && bytes[start + 1] == 10 { consume(upTo: start + 2) }
    }

    /// Where the CRLF CRLF that ends a head begins, looking no further than `maxHeadBytes` past the
    /// start, so whether a head is too large does not depend on how its bytes were split into reads.
    /// `strictLineEnds`: a bare LF, or a CR not followed by LF, is refused as soon as it arrives
    /// (RFC 9112 §2.2 lets a server reject it) rather than waiting for a CRLF CRLF that such a peer
    /// never sends. Throws `headersTooLarge` once `maxHeadBytes` are held without the end.
    mutating func headEnd(maxHeadBytes: Int, strictLineEnds: Bool) throws(HTTPParseError) -> Int? {
        var i = max(start, scanFrom)
        let limit = min(bytes.count, start + maxHeadBytes + 4)
        while i < limit {
            bytesScanned &+= 1
            let byte = bytes[i]
            if byte == 10 {
                if i > start, bytes[i - 1] == 13 {
                    if i - start >= 3 && bytes[i - 2] == 10 && bytes[i - 3] == 13 {
                        scanFrom = i + 1
                        guard i - 3 - start <= maxHeadBytes else { throw Self.headTooLarge(maxHeadBytes) }
                        return i - 3
                    }
                } else if strictLineEnds {
                    throw HTTPParseError(kind: .malformed, message: "a line ends in a bare LF: lines end in CRLF")
                }
            } else if strictLineEnds, i > start, bytes[i - 1] == 13 {
                throw HTTPParseError(kind: .malformed, message: "a CR not followed by LF in the head")
            }
            i += 1
        }
        scanFrom = limit
        if bytes.count - start >= maxHeadBytes + 4 {
            throw Self.headTooLarge(maxHeadBytes)
        }
        return nil
    }

    private static func headTooLarge(_ limit: Int) -> HTTPParseError {
        HTTPParseError(kind: .headersTooLarge, message: "start line and headers exceed \(limit) bytes")
    }

    /// Where the CRLF that ends the line at the start begins; throws once `maxLineBytes` are held
    /// without it.
    mutating func lineEnd(maxLineBytes: Int) throws(HTTPParseError) -> Int? {
        var i = max(start, scanFrom)
        while i + 1 < bytes.count {
            bytesScanned &+= 1
            if bytes[i] == 13 && bytes[i + 1] == 10 { return i }
            i += 1
        }
        scanFrom = max(start, i)
        if bytes.count - start > maxLineBytes {
            throw HTTPParseError(kind: .malformed, message: "a line longer than \(maxLineBytes) bytes")
        }
        return nil
    }
}
