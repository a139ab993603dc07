/// What one HTTP/1.1 message may hold, and the reading of the numbers that size it: the one home
/// of the limits the request and response parsers enforce, so a hostile peer meets the same rules
/// whichever side of a connection it is on.
public struct HTTPMessageLimits: Sendable, Hashable {
    /// The start line and the header lines with their CRLFs, without the empty line that ends them.
    public var maxHeadBytes: Int
    /// Header lines in one head: a head of many tiny headers costs a dictionary entry each.
    public var maxHeaderCount: Int
    /// A body held in memory (for a chunked body, the sum of its chunks; for an event stream, one chunk).
    public var maxBodyBytes: Int

    public init(maxHeadBytes: Int, maxHeaderCount: Int = 256, maxBodyBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }

    /// A chunk-size line (RFC 9112 §7.1) is a hex number and optional extensions: one this long
    /// without its CRLF is not a chunk-size line.
    static let maxChunkSizeLineBytes = 1024

    /// The size of a chunk-size line (RFC 9112 §7.1: `chunk-size = 1*HEXDIG`, then optional
    /// `;extensions`): hex digits only — no sign, no `0x`, no spaces inside — and nil when it is
    /// not one or does not fit an `Int`.
    static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
        let digits = line.prefix { $0 != UInt8(ascii: ";") }
        var end = digits.endIndex
        // Whitespace before the extensions (RFC 9112 §7.1.1's BWS).
        while end > digits.startIndex, digits[end - 1] == 0x20 || digits[end - 1] == 0x09 { end -= 1 }
        return hexNumber(digits[digits.startIndex..<end])
    }

    /// A `Content-Length` (RFC 9110 §8.6: `1*DIGIT`): every value the same, digits only, fitting an `Int`.
    static func contentLength(_ values: [String]) throws(HTTPParseError) -> Int? {
        guard let first = values.first else { return nil }
        let text = first.trimmingSpaces
        guard values.allSatisfy({ $0.trimmingSpaces == text }), !text.isEmpty,
              text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(text) else {
            throw HTTPParseError(kind: .malformed, message: "bad Content-Length '\(first.prefix(40))'")
        }
        return n
    }

    private static func hexNumber(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            let digit: Int
            switch byte {
            case 48...57: digit = Int(byte) - 48
            case 65...70: digit = Int(byte) - 55
            case 97...102: digit = Int(byte) - 87
            default: return nil
            }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 16)
            let (sum, carry) = shifted.addingReportingOverflow(digit)
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }
}
