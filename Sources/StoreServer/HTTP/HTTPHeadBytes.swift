/// A request's or response's head read as bytes: cut into lines at CRLF and fields at their
/// colon without building a `String` of the whole head first. Splitting a `String` works on
/// Characters (grapheme breaking every byte), which made parsing a head cost as much as parsing
/// its JSON body; every separator here is ASCII, so cutting the bytes cuts the same places.
enum HTTPHeadBytes {
    /// Whether `bytes` are UTF-8 (ASCII, the usual head, is checked without decoding).
    static func isUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || String(validating: bytes, as: UTF8.self) != nil
    }

    /// The lines of a head that holds no final CRLF, cut at each CRLF (a lone CR or LF stays in
    /// its line, as `String.split(separator: "\r\n")` kept it).
    static func lines(_ head: ArraySlice<UInt8>, omittingEmpty: Bool) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        var i = head.startIndex
        while i < head.endIndex {
            if head[i] == 13, i + 1 < head.endIndex, head[i + 1] == 10 {
                if !omittingEmpty || i > lineStart { lines.append(head[lineStart..<i]) }
                i += 2
                lineStart = i
            } else {
                i += 1
            }
        }
        if !omittingEmpty || head.endIndex > lineStart { lines.append(head[lineStart..<head.endIndex]) }
        return lines
    }

    /// The bytes as text, spaces and tabs around it removed (RFC 9112 §5.1's optional whitespace).
    static func trimmedText(_ bytes: ArraySlice<UInt8>) -> String {
        var lower = bytes.startIndex, upper = bytes.endIndex
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }

    /// The header fields of a head's lines after its start line, at most `maxCount` of them.
    /// `validatingNames`: a name must be visible ASCII without spaces (RFC 9110 §5.1's token is
    /// stricter still); the response parser, reading our own daemon or a proxy, takes any name.
    static func headers(_ lines: ArraySlice<ArraySlice<UInt8>>, maxCount: Int,
                        validatingNames: Bool) throws(HTTPParseError) -> HTTPHeaders {
        guard lines.count <= maxCount else {
            throw HTTPParseError(kind: .headersTooLarge, message: "\(lines.count) header lines: at most \(maxCount)")
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(lines.count)
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HTTPParseError(kind: .malformed, message: "header line without ':' '\(text(line.prefix(100)))'")
            }
            let name = line[..<colon]
            if validatingNames {
                guard !name.isEmpty, name.allSatisfy({ $0 > 32 && $0 < 127 }) else {
                    throw HTTPParseError(kind: .malformed, message: "bad header name '\(text(name.prefix(100)))'")
                }
            }
            headers.add(text(name), trimmedText(line[(colon + 1)...]))
        }
        return headers
    }

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
}
