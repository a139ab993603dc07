// Four-character codes naming codecs in IVF headers ("VP80", "VP90", "AV01", "H264", …).

/// A four-character code, stored as the four bytes in file order.
public struct FourCC: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) { bytes = (a, b, c, d) }

    /// A code from a 4-character ASCII string; `precondition` on any other length.
    public init(_ string: StaticString) {
        let utf8 = string.utf8Start
        precondition(string.utf8CodeUnitCount == 4, "a FourCC has four characters")
        bytes = (utf8[0], utf8[1], utf8[2], utf8[3])
    }

    public static let vp8 = FourCC("VP80")
    public static let vp9 = FourCC("VP90")
    public static let av1 = FourCC("AV01")
    public static let h264 = FourCC("H264")

    public var array: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3] }

    public static func == (l: FourCC, r: FourCC) -> Bool { l.array == r.array }
    public func hash(into h: inout Hasher) { h.combine(array) }

    public var description: String {
        String(decoding: array.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
