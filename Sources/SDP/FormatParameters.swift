// The parameters of an `a=fmtp` line (RFC 8866 §6.15): format-specific text, for the codecs we
// negotiate a `;`-separated list of `name=value` pairs (RFC 6184 §8.1 for H.264, RFC 4588 §8.6
// for RTX, VP9's profile-id). Read once, when the line is parsed, and written back as it came.

/// The `a=fmtp` parameters of one format: the text as written, and its `name=value` pairs read
/// from it once. Spaces and tabs around names and values are not part of them; `name=` with
/// nothing after it, or a `name` alone, is not a pair. Names compare without ASCII case.
public struct FormatParameters: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The parameters as written (`level-asymmetry-allowed=1;packetization-mode=1;…`), so a
    /// description we read is written back byte for byte.
    public let text: String
    /// Where each pair's name and value lie in `text`'s UTF-8 bytes, in order. Offsets rather
    /// than strings: one allocation for a line however many parameters it has.
    private let pairs: [Pair]

    /// The byte ranges of one `name=value` pair in `text`.
    private struct Pair: Hashable, Sendable {
        var name: Range<Int>
        var value: Range<Int>
    }

    /// Reads the pairs of `text`.
    public init(_ text: String) {
        self.text = text
        var pairs: [Pair] = []
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: ";") { end += 1 }
                var equals = start
                while equals < end && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                if equals + 1 < end {
                    let name = Self.trimmed(start..<equals, in: bytes)
                    let value = Self.trimmed((equals + 1)..<end, in: bytes)
                    pairs.append(Pair(name: name, value: value))
                }
                start = end + 1
            }
        }
        self.pairs = pairs
    }

    public init(stringLiteral text: String) {
        self.init(text)
    }

    /// The pairs as strings, in order.
    public var parameters: [(name: String, value: String)] {
        pairs.map { (string(at: $0.name), string(at: $0.value)) }
    }

    /// The value of the first parameter named `name` (any ASCII case); nil when absent.
    public func value(of name: String) -> String? {
        index(of: name).map { string(at: pairs[$0].value) }
    }

    /// These parameters with `name` set to `value`: the value of the first pair of that name
    /// replaced, or `name=value` added at the end; the rest of the text kept as written.
    public func setting(_ name: String, to value: String) -> FormatParameters {
        guard let index = index(of: name) else {
            return FormatParameters(text.isEmpty ? "\(name)=\(value)" : "\(text);\(name)=\(value)")
        }
        let range = pairs[index].value
        let bytes = Array(text.utf8)
        return FormatParameters(
            String(decoding: bytes[..<range.lowerBound], as: UTF8.self) + value
                + String(decoding: bytes[range.upperBound...], as: UTF8.self))
    }

    /// Calls `body` with each pair's name and value bytes in order until it returns true.
    func forEachParameter(
        _ body: (_ name: Slice<UnsafeBufferPointer<UInt8>>, _ value: Slice<UnsafeBufferPointer<UInt8>>) -> Bool
    ) {
        var text = text
        text.withUTF8 { bytes in
            for pair in pairs where body(bytes[pair.name], bytes[pair.value]) { return }
        }
    }

    /// Whether a parameter's `name` bytes are `key` (lowercase) in any ASCII case.
    static func matches(_ name: Slice<UnsafeBufferPointer<UInt8>>, _ key: StaticString) -> Bool {
        key.withUTF8Buffer { key in
            guard name.count == key.count else { return false }
            var index = name.startIndex
            for byte in key {
                guard SDPGrammar.lowercased(name[index]) == byte else { return false }
                index += 1
            }
            return true
        }
    }

    public var description: String { text }

    public static func == (a: FormatParameters, b: FormatParameters) -> Bool { a.text == b.text }

    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// The index in `pairs` of the first pair named `name`, in any ASCII case.
    private func index(of name: String) -> Int? {
        var text = text, name = name
        return text.withUTF8 { bytes in
            name.withUTF8 { key in
                pairs.firstIndex { pair in
                    pair.name.count == key.count
                        && zip(bytes[pair.name], key).allSatisfy {
                            SDPGrammar.lowercased($0) == SDPGrammar.lowercased($1)
                        }
                }
            }
        }
    }

    private func string(at range: Range<Int>) -> String {
        String(decoding: text.utf8.dropFirst(range.lowerBound).prefix(range.count), as: UTF8.self)
    }

    /// `range` without leading and trailing spaces and tabs.
    private static func trimmed(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        func isSpace(_ c: UInt8) -> Bool { c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") }
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, isSpace(bytes[lower]) { lower += 1 }
        while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }
}
