// The text of a session description being written: UTF-8 bytes in one buffer, made a `String`
// once at the end. Every offer and answer is printed, a hundred pieces each; appending a piece to
// a `String` costs a few hundred instructions, appending its bytes a few dozen, and numbers are
// written digit by digit instead of through a string of their own.

struct SDPTextBuffer {
    private var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far.
    var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends a string's UTF-8 bytes.
    mutating func append(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: text.utf8) }
    }

    /// Appends a literal (ASCII punctuation and prefixes).
    mutating func ascii(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// `prefix`, `value`, CRLF.
    mutating func line(_ prefix: StaticString, _ value: String) {
        ascii(prefix)
        append(value)
        ascii("\r\n")
    }

    /// Appends an unsigned number in decimal, without leading zeros.
    mutating func decimal<Number: UnsignedInteger & FixedWidthInteger>(_ number: Number) {
        var value = UInt64(number)
        // UInt64.max has 20 digits: written backwards into a fixed tuple, then copied in order.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count += 1
                buffer[24 - count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                value /= 10
            } while value > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }
}
