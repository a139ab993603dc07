// A strict JSON reader (RFC 8259) for request and response bodies, in the shapes the wire format
// reads: objects as `[String: Any]`, arrays as `[Any]`, strings, booleans, `NSNull`, and numbers as
// `NSNumber` — an integer literal that fits in Int64 as an integer, anything else as the Double
// nearest its text (correctly rounded, so a double printed shortest round-trips bit for bit;
// Foundation's `JSONSerialization` on Linux loses the last digit of some). Every body comes from a
// remote: depth is bounded, and each error says where it is.
import Foundation
import ZoneCore

/// Why a body is not JSON.
public struct JSONReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset of the problem.
    public var offset: Int
    public var detail: String

    public var description: String { "invalid JSON at byte \(offset): \(detail)" }
}

/// An integer literal too large for Int64 (2^64, -2^63-1): kept apart from `NSNumber` so that no
/// integer field can take it in by rounding; a DOUBLE field takes `double`.
public struct JSONLargeInteger: Hashable, Sendable {
    /// The literal as written.
    public var text: String
    /// The double nearest to it.
    public var double: Double
}

/// Reads one JSON value from bytes.
public struct JSONReader {
    /// Objects and arrays nested deeper than this are refused (a hostile body must not exhaust the stack).
    public static let maxDepth = 64

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The value `bytes` hold, whitespace around it allowed, nothing else after it.
    public static func parse(_ bytes: [UInt8]) throws(JSONReadError) -> Any {
        var reader = JSONReader(bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("unexpected data after the value") }
        return value
    }

    private func error(_ detail: String) -> JSONReadError { JSONReadError(offset: index, detail: detail) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(JSONReadError) -> Any {
        guard index < bytes.count else { throw error("the body ends where a value belongs") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return try string()
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        case UInt8(ascii: "n"): try literal("null"); return NSNull()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character \(Self.show(bytes[index]))")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONReadError) {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes.count - index >= text.count, bytes[index..<index + text.count].elementsEqual(text) else {
            throw error("expected \(word)")
        }
        index += text.count
    }

    private mutating func object(depth: Int) throws(JSONReadError) -> [String: Any] {
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth)") }
        index += 1
        // Room for the few keys a wire dictionary has: grown from empty, a dictionary of four keys
        // was allocated and rehashed three times.
        var result = [String: Any](minimumCapacity: 6)
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return result
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            result[key] = try value(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw error("the object is not closed") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
            index += 1
            return result
        }
    }

    private mutating func array(depth: Int) throws(JSONReadError) -> [Any] {
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth)") }
        index += 1
        var result: [Any] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return result
        }
        while true {
            skipWhitespace()
            result.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("the array is not closed") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
            index += 1
            return result
        }
    }

    /// A string (RFC 8259 §7): escapes decoded, surrogate pairs joined, control characters and
    /// invalid UTF-8 refused.
    private mutating func string() throws(JSONReadError) -> String {
        index += 1
        // Most strings have no escape: made from the bytes in place, in one step. ASCII is valid
        // UTF-8 as it is: such a string is made without the validation's generic code (which
        // looked up type metadata for every string).
        var end = index
        var ascii = true
        while end < bytes.count {
            let b = bytes[end]
            if b == UInt8(ascii: "\"") {
                let from = index
                let text = ascii
                    ? bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[from..<end]),
                                                             as: UTF8.self) }
                    : String(validating: bytes[index..<end], as: UTF8.self)
                index = end + 1
                guard let text else { throw error("a string is not UTF-8") }
                return text
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            if b >= 0x80 { ascii = false }
            end += 1
        }
        var out: [UInt8] = Array(bytes[index..<end])
        index = end
        while true {
            guard index < bytes.count else { throw error("the string is not closed") }
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: out, as: UTF8.self) else { throw error("a string is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("the string is not closed") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): out.append(contentsOf: try unicodeEscape())
                default: throw error("unknown escape \\\(Self.show(escaped))")
                }
            case 0..<0x20:
                throw error("a control character in a string")
            default:
                out.append(b)
                index += 1
            }
        }
    }

    /// The UTF-8 of a `\uXXXX` escape (the `\u` read), with its low surrogate if it is a high one.
    private mutating func unicodeEscape() throws(JSONReadError) -> [UInt8] {
        var scalar = UInt32(try hex4())
        if (0xD800...0xDBFF).contains(scalar) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("a high surrogate without its low surrogate") }
            index += 2
            let low = UInt32(try hex4())
            guard (0xDC00...0xDFFF).contains(low) else { throw error("a high surrogate without its low surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("a lone low surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("not a Unicode scalar") }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(JSONReadError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw error("\\u needs 4 hex digits") }
        var v: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(bytes[index]) else { throw error("\\u needs 4 hex digits") }
            v = v << 4 | UInt16(digit)
            index += 1
        }
        return v
    }

    /// A number (RFC 8259 §6): `-? int frac? exp?`, no leading zeros, no `+`, no bare `.`.
    private mutating func number() throws(JSONReadError) -> Any {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let intStart = index
        guard digits() > 0 else { throw error("a number needs digits") }
        if bytes[intStart] == UInt8(ascii: "0"), index - intStart > 1 { throw error("a number with a leading zero") }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard digits() > 0 else { throw error("a fraction needs digits") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw error("an exponent needs digits") }
        }
        // An integer of up to 18 digits fits in Int64 whatever they are: summed here, without the
        // text that `Int64(_:)` would parse.
        if integral {
            let negative = bytes[start] == UInt8(ascii: "-")
            let first = negative ? start + 1 : start
            if index - first <= 18 {
                var value: Int64 = 0
                for i in first..<index { value = value * 10 + Int64(bytes[i] &- UInt8(ascii: "0")) }
                return NSNumber(value: negative ? -value : value)
            }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let exact = Int64(text) { return NSNumber(value: exact) }
        // Swift's parsing is correctly rounded; out of range it gives ±infinity, which is refused.
        guard let double = Double(text), double.isFinite else {
            throw JSONReadError(offset: start, detail: "the number \(text.prefix(40)) is out of range")
        }
        if integral { return JSONLargeInteger(text: text, double: double) }
        return NSNumber(value: double)
    }

    private static func show(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }
}
