/// JSON string literals (RFC 8259 §7), for the few places that write JSON text by hand: log
/// lines, record fields, error bodies.
public enum JSONString {
    /// `text` as a quoted JSON string literal.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        appendEscaped(text, to: &out, quoting: true)
        out += "\""
        return out
    }

    /// Whether `appendEscaped` may change UTF-8 `bytes`: they hold a control byte, DEL, the lead byte
    /// 0xE2 of U+2028/U+2029 (and other characters: then the text is read scalar by scalar), or,
    /// when `quoting`, `"` or `\`. Text without any is written as it is.
    @inlinable
    public static func mayNeedEscaping(_ bytes: UnsafeBufferPointer<UInt8>, quoting: Bool) -> Bool {
        bytes.contains { byte in
            byte < 0x20 || byte == 0x7F || byte == 0xE2 || (quoting && (byte == 0x22 || byte == 0x5C))
        }
    }

    /// Escapes control characters (and, when `quoting`, `"` and `\`) JSON-style. U+2028 and
    /// U+2029 are escaped too: JSON allows them raw, but JavaScript string literals do not.
    public static func appendEscaped(_ text: String, to line: inout String, quoting: Bool) {
        // Scanned over the string's contiguous bytes.
        var text = text
        guard text.withUTF8({ mayNeedEscaping($0, quoting: quoting) }) else {
            line += text
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"" where quoting: line += "\\\""
            case "\\" where quoting: line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case "\u{08}": line += "\\b"
            case "\u{0C}": line += "\\f"
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
                line += "\\u" + Hex.string(scalar.value, digits: 4)
            default:
                line.unicodeScalars.append(scalar)
            }
        }
    }
}
