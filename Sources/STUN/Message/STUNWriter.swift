// A byte writer for the encoders: network-order integers appended to an array whose capacity
// the encoder reserved up front (RFC 8489 §5: all fields are big-endian).

/// Appends big-endian fields to a byte array.
struct STUNWriter {
    var bytes: [UInt8]

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    @inline(__always) mutating func u8(_ v: UInt8) { bytes.append(v) }

    @inline(__always) mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always) mutating func u32(_ v: UInt32) {
        u16(UInt16(truncatingIfNeeded: v >> 16))
        u16(UInt16(truncatingIfNeeded: v))
    }

    @inline(__always) mutating func u64(_ v: UInt64) {
        u32(UInt32(truncatingIfNeeded: v >> 32))
        u32(UInt32(truncatingIfNeeded: v))
    }

    @inline(__always) mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    @inline(__always) mutating func append(utf8 s: String) { bytes.append(contentsOf: s.utf8) }

    /// Appends `byte` until the count is a multiple of 4.
    @inline(__always) mutating func pad(with byte: UInt8) {
        while bytes.count & 3 != 0 { bytes.append(byte) }
    }

    /// Overwrites the big-endian 16-bit field at `offset`.
    @inline(__always) mutating func set16(_ v: UInt16, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: v >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: v)
    }
}
