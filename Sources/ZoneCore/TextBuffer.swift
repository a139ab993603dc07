// Text being written: UTF-8 bytes in one buffer, made a `String` once at the end. Session
// descriptions (every offer and answer, a hundred pieces each) and the JSON of candidate batches
// are written through it, so pieces are appended as bytes and numbers digit by digit, not through
// strings of their own.
//
// The bytes live in memory the buffer owns, grown by doubling and written after one capacity
// comparison. The buffer is non-copyable, so the memory has one owner and is freed exactly once,
// when the buffer ends.

/// Text written as bytes into memory it owns: descriptions, and the JSON of candidate batches.
public struct TextBuffer: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    public init(capacity: Int) {
        self.capacity = Swift.max(capacity, 32)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The text written so far.
    public var string: String { String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self) }

    /// Makes room for `more` bytes after those written, doubling the memory when it is short.
    private mutating func reserve(_ more: Int) {
        let needed = count + more
        if needed <= capacity { return }
        let grown = Swift.max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = grown
    }

    /// Appends bytes.
    private mutating func write(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        reserve(source.count)
        (start + count).initialize(from: base, count: source.count)
        count += source.count
    }

    /// Appends a string's UTF-8 bytes.
    public mutating func append(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { write($0) }
        if copied == nil {
            // A bridged or otherwise non-contiguous string: made native once, then copied.
            var native = text
            native.withUTF8 { write($0) }
        }
    }

    /// Appends `text` escaped as `JSONString.appendEscaped(_:to:quoting: true)` escapes it, without the
    /// quotes: copied as it is when that function would leave it so (`JSONString.mayNeedEscaping`),
    /// which is so for every candidate we print; otherwise escaped by that function.
    public mutating func appendJSONEscaped(_ text: String) {
        appendJSONEscaped { $0.append(text) }
    }

    /// Appends what `write` writes, escaped as `appendJSONEscaped(_:)` escapes a string: left as
    /// written when it needs no escape, else taken back and escaped.
    public mutating func appendJSONEscaped(writing write: (inout TextBuffer) -> Void) {
        let before = count
        write(&self)
        let written = UnsafeBufferPointer(start: start + before, count: count - before)
        guard JSONString.mayNeedEscaping(written, quoting: true) else { return }
        let text = String(decoding: written, as: UTF8.self)
        count = before
        var escaped = ""
        JSONString.appendEscaped(text, to: &escaped, quoting: true)
        append(escaped)
    }

    /// Appends a literal (ASCII punctuation and prefixes).
    public mutating func ascii(_ literal: StaticString) {
        literal.withUTF8Buffer { write($0) }
    }

    /// `prefix`, `value`, CRLF.
    public mutating func line(_ prefix: StaticString, _ value: String) {
        ascii(prefix)
        append(value)
        ascii("\r\n")
    }

    /// Appends an unsigned number in decimal, without leading zeros.
    public mutating func decimal<Number: UnsignedInteger & FixedWidthInteger>(_ number: Number) {
        var value = UInt64(number)
        // Counted first, then written backwards from its last digit straight into the buffer.
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        reserve(digits)
        var position = count + digits
        repeat {
            position -= 1
            start[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
            value /= 10
        } while value > 0
        count += digits
    }
}
