// The lexical pieces of RFC 8866 §9 (SDP grammar) shared by the SDP and ICE candidate parsers:
// tokens, decimal numbers, ice-chars (RFC 8839 §5.1) and splitting on spaces.
//
// Everything here works on UTF-8 bytes: SDP is a byte protocol whose grammar is ASCII. The
// helpers take `ArraySlice<UInt8>` and loop over indices rather than calling the generic
// `Sequence` algorithms: unspecialized generic calls dominate a debug build's profile, and the
// fuzz tests run 20,000 descriptions through these functions.

import Glibc

/// The byte-level rules of SDP text (RFC 8866 §9): tokens, numbers, splitting, case, quoting.
public enum SDPGrammar {
    static let space = UInt8(ascii: " ")
    static let colon = UInt8(ascii: ":")
    static let slash = UInt8(ascii: "/")
    static let equals = UInt8(ascii: "=")
    static let semicolon = UInt8(ascii: ";")
    static let dot = UInt8(ascii: ".")
    static let hyphen = UInt8(ascii: "-")
    static let star = UInt8(ascii: "*")
    static let carriageReturn = UInt8(ascii: "\r")
    static let lineFeed = UInt8(ascii: "\n")

    /// `token-char` (RFC 8866 §9): visible ASCII except `"(),/:;<=>?@[\]`.
    /// As bit masks over 0x00–0x3F and 0x40–0x7F (a range `switch` costs generic calls per byte
    /// in a debug build).
    static func isTokenChar(_ c: UInt8) -> Bool {
        if c < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> c & 1 == 1 }
        if c < 128 { return (0x7FFF_FFFF_C7FF_FFFE as UInt64) >> (c - 64) & 1 == 1 }
        return false
    }

    /// `token = 1*token-char`.
    static func isToken(_ bytes: ArraySlice<UInt8>) -> Bool {
        !bytes.isEmpty && all(bytes, isTokenChar)
    }

    /// True when `predicate` holds for every byte (and for an empty slice).
    static func all(_ bytes: ArraySlice<UInt8>, _ predicate: (UInt8) -> Bool) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard predicate(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// True when `byte` occurs in `bytes`.
    static func contains(_ bytes: ArraySlice<UInt8>, _ byte: UInt8) -> Bool {
        firstIndex(of: byte, in: bytes) != nil
    }

    /// The index of the first `byte` in `bytes`, found with `memchr`.
    static func firstIndex(of byte: UInt8, in bytes: ArraySlice<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress, let found = memchr(base, Int32(byte), buffer.count) else { return nil }
            return bytes.startIndex + (UnsafeRawPointer(found) - UnsafeRawPointer(base))
        }
    }

    /// `ice-char = ALPHA / DIGIT / "+" / "/"` (RFC 8839 §5.1).
    static func isICEChar(_ c: UInt8) -> Bool {
        isAlpha(c) || isDigit(c) || c == UInt8(ascii: "+") || c == slash
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    static func isAlpha(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    /// `VCHAR` (RFC 5234): visible ASCII, no space.
    static func isVisible(_ c: UInt8) -> Bool { c >= 0x21 && c <= 0x7E }

    /// `1*DIGIT` as an unsigned integer of type `T`; nil for anything else or a value that does
    /// not fit. Leading zeros are accepted because the grammar allows them; signs are not.
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ bytes: ArraySlice<UInt8>, as type: T.Type) -> T? {
        digits(bytes, as: type)
    }

    /// `decimal(_:as:)` read from a string's own bytes (a format on an `m=` line is kept as text).
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ text: String, as type: T.Type) -> T? {
        digits(text.utf8, as: type)
    }

    /// The one reading of `1*DIGIT` both `decimal`s share.
    @inline(__always)
    private static func digits<T: FixedWidthInteger & UnsignedInteger>(
        _ bytes: some Collection<UInt8>, as type: T.Type
    ) -> T? {
        guard !bytes.isEmpty else { return nil }
        var value: T = 0
        for c in bytes {
            guard isDigit(c) else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(T(c - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// The pieces of `bytes` between runs of spaces, without empty pieces.
    ///
    /// RFC 8866 separates fields with exactly one space; accepting runs costs nothing and
    /// forgives hand-edited descriptions.
    static func fields(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        split(bytes, on: space, omittingEmpty: true)
    }

    /// The pieces of `bytes` between `separator`s; empty pieces too unless `omittingEmpty`.
    static func split(_ bytes: ArraySlice<UInt8>, on separator: UInt8, omittingEmpty: Bool) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == separator {
                if !omittingEmpty || index > start { pieces.append(bytes[start..<index]) }
                start = index + 1
            }
            index += 1
        }
        if !omittingEmpty || bytes.endIndex > start { pieces.append(bytes[start..<bytes.endIndex]) }
        return pieces
    }

    /// `bytes` split at the first `separator`: the part before, and the part after (nil when
    /// `separator` does not occur).
    static func splitOnce(
        _ bytes: ArraySlice<UInt8>, at separator: UInt8
    ) -> (head: ArraySlice<UInt8>, tail: ArraySlice<UInt8>?) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == separator {
                return (bytes[bytes.startIndex..<index], bytes[(index + 1)..<bytes.endIndex])
            }
            index += 1
        }
        return (bytes, nil)
    }

    /// ASCII case-insensitive comparison with a lowercase literal (ABNF strings are
    /// case-insensitive, RFC 5234 §2.3).
    static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: String) -> Bool {
        var expected = lowercase.utf8.makeIterator()
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard let wanted = expected.next(), lowercased(bytes[index]) == wanted else { return false }
            index += 1
        }
        return expected.next() == nil
    }

    static func lowercased(_ c: UInt8) -> UInt8 {
        c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c + 32 : c
    }

    /// The bytes as a String; only call on bytes already known to be valid UTF-8 (the SDP
    /// parser checks each line once).
    static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// A piece of peer input for an error message: quoted, control characters escaped, and cut
    /// short so a hostile peer cannot make a log line arbitrarily long.
    public static func quoted(_ text: String, limit: Int = 120) -> String {
        let shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return shown.debugDescription
    }
}
