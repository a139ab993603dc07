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
        var bytes: [UInt8] = [1, p.kind.rawValue]
        func put(_ v: UInt64) { for i in (0..<8).reversed() { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        put(p.owner); put(p.incarnation); put(p.sequence); put(UInt64(bitPattern: p.issuedAtMs))
        let check = FNV1a.hash(bytes)
        put(check)
        rawValue = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The payload, or nil if this is not a token this store issued.
    var payload: Payload? {
        var b64 = rawValue.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), data.count == 42 else { return nil }
        let bytes = [UInt8](data)
        func get(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[at + $1]) } }
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

    static func hash(_ parts: String...) -> UInt64 {
        var bytes: [UInt8] = []
        for p in parts { bytes.append(contentsOf: p.utf8); bytes.append(0) }
        return hash(bytes)
    }
}
