/// Appends integers in network order (big-endian) or little-endian to a growing byte buffer.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }

    public mutating func writeUInt16(_ v: UInt16) {
        bytes.append(UInt8(v >> 8)); bytes.append(UInt8(truncatingIfNeeded: v))
    }

    public mutating func writeUInt32(_ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    public mutating func writeUInt64(_ v: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    public mutating func writeUInt16LE(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v)); bytes.append(UInt8(v >> 8))
    }

    public mutating func writeUInt32LE(_ v: UInt32) {
        for shift in stride(from: 0, through: 24, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    public mutating func writeUInt64LE(_ v: UInt64) {
        for shift in stride(from: 0, through: 56, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    public mutating func writeInt64(_ v: Int64) { writeUInt64(UInt64(bitPattern: v)) }

    public mutating func writeDouble(_ v: Double) { writeUInt64(v.bitPattern) }

    public mutating func writeBytes<S: Sequence>(_ s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }

    /// Writes an unsigned LEB128 varint.
    public mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Writes a varint length and the string's UTF-8 bytes.
    public mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Writes a varint length and the bytes.
    public mutating func writeLengthPrefixedBytes(_ b: [UInt8]) {
        writeVarint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    /// Overwrites 4 bytes at `offset` in network order (for length fields written afterwards).
    public mutating func setUInt32(_ v: UInt32, at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: v >> UInt32(24 - 8 * i)) }
    }

    /// Overwrites 2 bytes at `offset` in network order.
    public mutating func setUInt16(_ v: UInt16, at offset: Int) {
        bytes[offset] = UInt8(v >> 8); bytes[offset + 1] = UInt8(truncatingIfNeeded: v)
    }
}
