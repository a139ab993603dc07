import ZoneCore

/// `name=value&…` as browsers write a URL's query and a form body (`application/x-www-form-urlencoded`):
/// split on the bytes `&` and `=` (the text's Characters would not split where a combining mark
/// follows one), empty parts skipped, `%XX` a byte, and in a form body `+` a space.
public enum URLEncodedPairs {
    /// The parts of `bytes`, not yet decoded: each part's name and, after its first `=`, its value
    /// (empty without one).
    public static func parts(_ bytes: ArraySlice<UInt8>) -> [(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
        bytes.split(separator: UInt8(ascii: "&")).map { part in
            guard let equals = part.firstIndex(of: UInt8(ascii: "=")) else { return (part, part[part.endIndex...]) }
            return (part[..<equals], part[part.index(after: equals)...])
        }
    }

    /// One name or value decoded: `%XX` is that byte, `+` a space where `plusIsSpace` (form bodies; a
    /// URL's query keeps it). Nil for a `%` without two hex digits after it, or bytes that are not
    /// UTF-8 once decoded.
    public static func decoded(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            switch bytes[i] {
            case UInt8(ascii: "+") where plusIsSpace:
                out.append(UInt8(ascii: " "))
                i += 1
            case UInt8(ascii: "%"):
                guard bytes.endIndex - i >= 3, let high = Hex.value(bytes[i + 1]), let low = Hex.value(bytes[i + 2])
                else { return nil }
                out.append(high << 4 | low)
                i += 3
            case let byte:
                out.append(byte)
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// The pairs of `target`'s query (after its first `?`), decoded; a name or value that does not
    /// decode is kept as sent, so that it fails wherever it is used (a token, a room name).
    public static func query(of target: String) -> [(name: String, value: String)] {
        let bytes = Array(target.utf8)
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        return parts(bytes[(mark + 1)...]).map { name, value in
            (decoded(name, plusIsSpace: false) ?? String(decoding: name, as: UTF8.self),
             decoded(value, plusIsSpace: false) ?? String(decoding: value, as: UTF8.self))
        }
    }
}
