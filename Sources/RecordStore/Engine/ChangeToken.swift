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

    init(_ p: Payload) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(42)
        bytes.append(1)
        bytes.append(p.kind.rawValue)
        // Big-endian, most significant byte first.
        func put(_ v: UInt64) {
            var shift: UInt64 = 56
            while true {
                bytes.append(UInt8(truncatingIfNeeded: v >> shift))
                if shift == 0 { break }
                shift -= 8
            }
        }
        put(p.owner); put(p.incarnation); put(p.sequence); put(UInt64(bitPattern: p.issuedAtMs))
        let check = FNV1a.hash(bytes)
        put(check)
        rawValue = Base64URL.encode(bytes)
    }

    /// The payload, or nil if this is not a token this store issued.
    var payload: Payload? {
        guard let bytes = Base64URL.decode(rawValue), bytes.count == 42 else { return nil }
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
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        let length = (bytes.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { out in
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

    /// The bytes, or nil for anything but unpadded base64url (a length of 1 mod 4 included).
    static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(characters: $0) }
    }

    private static func decode(characters chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in chars {
            let v = values[Int(c)]
            guard v != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, as an encoder writes them.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
