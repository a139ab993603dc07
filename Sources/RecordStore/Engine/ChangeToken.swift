import Foundation

/// An opaque change token, per zone or per database; not interchangeable.
///
/// Inside (never to be relied on by clients): what it belongs to, the incarnation of that zone,
/// the change sequence it stands for, when it was issued (for the retention window) and a
/// check value so a mangled token is refused rather than misread.
public struct ChangeToken: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    enum Kind: UInt8 { case zone = 1, database = 2 }

    struct Payload: Equatable {
        var kind: Kind
        var owner: UInt64
        var incarnation: UInt64
        var sequence: UInt64
        var issuedAtMs: Int64
    }

    /// A token's bytes: version, kind, four values and the check value over the rest.
    private static let byteCount = 42

    init(_ p: Payload) {
        // Written on the stack and encoded from there: every change-feed page issues a token.
        rawValue = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.byteCount) { bytes in
            bytes[0] = 1
            bytes[1] = p.kind.rawValue
            // Big-endian, most significant byte first.
            func put(_ v: UInt64, at offset: Int) {
                for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: v >> UInt64(56 - 8 * i)) }
            }
            put(p.owner, at: 2); put(p.incarnation, at: 10); put(p.sequence, at: 18)
            put(UInt64(bitPattern: p.issuedAtMs), at: 26)
            put(FNV1a.hash(bytes[0..<34]), at: 34)
            return Base64URL.encode(UnsafeBufferPointer(bytes))
        }
    }

    /// The payload, or nil if this is not a token this store issued.
    var payload: Payload? {
        // Only 56 characters decode to 42 bytes; they are decoded on the stack (every change-feed
        // request with a token reads one).
        guard rawValue.utf8.count == Self.byteCount / 3 * 4 else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.byteCount) { bytes -> Payload? in
            guard Base64URL.decode(rawValue, into: bytes) == Self.byteCount else { return nil }
            func get(_ at: Int) -> UInt64 {
                var v: UInt64 = 0
                for i in at..<at + 8 { v = v << 8 | UInt64(bytes[i]) }
                return v
            }
            guard bytes[0] == 1, let kind = Kind(rawValue: bytes[1]), FNV1a.hash(bytes[0..<34]) == get(34) else {
                return nil
            }
            return Payload(kind: kind, owner: get(2), incarnation: get(10), sequence: get(18),
                           issuedAtMs: Int64(bitPattern: get(26)))
        }
    }
}

/// FNV-1a, 64-bit: a fast non-cryptographic hash for token check values and identities.
enum FNV1a {
    static func hash<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    /// The hash of the parts' UTF-8, each followed by a zero byte (read in place, not joined).
    static func hash(_ parts: String...) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for p in parts {
            for b in p.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            h = h &* 0x100_0000_01b3
        }
        return h
    }
}

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), the form tokens travel in.
/// Written out rather than going through Foundation's string replacing: every change-feed
/// request decodes one token and encodes another.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode($0) }
    }

    static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let length = (bytes.count * 4 + 2) / 3
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: length) { out in
                // Characters one at a time: an array literal per group would allocate.
                var o = 0
                func put(_ sextet: UInt32) {
                    out[o] = alphabet[Int(sextet & 63)]
                    o += 1
                }
                var i = 0
                while i + 3 <= bytes.count {
                    let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                    put(v >> 18); put(v >> 12); put(v >> 6); put(v)
                    i += 3
                }
                let rest = bytes.count - i
                if rest == 1 {
                    let v = UInt32(bytes[i]) << 16
                    put(v >> 18); put(v >> 12)
                } else if rest == 2 {
                    let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                    put(v >> 18); put(v >> 12); put(v >> 6)
                }
                return o
            }
        }
    }

    /// The bytes, or nil for anything but unpadded base64url (a length of 1 mod 4 included).
    public static func decode(_ text: String) -> [UInt8]? {
        var valid = true
        let bytes = [UInt8](unsafeUninitializedCapacity: text.utf8.count * 3 / 4) { out, count in
            if let n = decode(text, into: out) { count = n } else { valid = false; count = 0 }
        }
        return valid ? bytes : nil
    }

    /// Decodes `text` into `out`, which has room for `text.utf8.count * 3 / 4` bytes: how many it
    /// wrote, or nil for anything but unpadded base64url.
    static func decode(_ text: String, into out: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        var text = text
        return text.withUTF8 { chars in
            values.withUnsafeBufferPointer { decode(characters: chars, values: $0, into: out) }
        }
    }

    /// Four characters at a time into three bytes; a character outside the alphabet has the value
    /// 0xFF, so any of them in a group sets bits no sextet has.
    private static func decode(characters chars: UnsafeBufferPointer<UInt8>, values: UnsafeBufferPointer<UInt8>,
                               into out: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard chars.count % 4 != 1 else { return nil }
        precondition(out.count >= chars.count * 3 / 4, "room for the decoded bytes")
        var i = 0, o = 0
        while i + 4 <= chars.count {
            let a = values[Int(chars[i])], b = values[Int(chars[i + 1])]
            let c = values[Int(chars[i + 2])], d = values[Int(chars[i + 3])]
            guard (a | b | c | d) & 0xC0 == 0 else { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            out[o] = UInt8(truncatingIfNeeded: v >> 16)
            out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
            out[o + 2] = UInt8(truncatingIfNeeded: v)
            i += 4
            o += 3
        }
        let rest = chars.count - i
        guard rest >= 2 else { return o }
        // Two or three characters left: one or two bytes, and leftover bits that must be zero, as an
        // encoder writes them.
        var v: UInt32 = 0
        for j in i..<chars.count {
            let x = values[Int(chars[j])]
            guard x & 0xC0 == 0 else { return nil }
            v = v << 6 | UInt32(x)
        }
        if rest == 2 {
            guard v & 0xF == 0 else { return nil }
            out[o] = UInt8(truncatingIfNeeded: v >> 4)
            return o + 1
        }
        guard v & 0x3 == 0 else { return nil }
        out[o] = UInt8(truncatingIfNeeded: v >> 10)
        out[o + 1] = UInt8(truncatingIfNeeded: v >> 2)
        return o + 2
    }
}
