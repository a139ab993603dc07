/// Errors from reading bytes: what was expected, and where.
public struct ByteReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// How many bytes were wanted.
    public var wanted: Int
    /// The offset at which they were wanted.
    public var offset: Int
    /// How many bytes remained.
    public var remaining: Int

    public var description: String {
        "truncated input: wanted \(wanted) bytes at offset \(offset), \(remaining) left"
    }
}

/// A cursor over bytes that reads integers in network order (big-endian) or little-endian.
///
/// Every read checks bounds and throws `ByteReaderError` instead of trapping, so a decoder fed
/// hostile input fails with a clear error.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    public private(set) var offset: Int
    public let end: Int

    public init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    @inline(__always)
    private func need(_ n: Int) throws(ByteReaderError) {
        if n < 0 || end - offset < n {
            throw ByteReaderError(wanted: n, offset: offset, remaining: end - offset)
        }
    }

    public mutating func readUInt8() throws(ByteReaderError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readUInt16() throws(ByteReaderError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func readUInt32() throws(ByteReaderError) -> UInt32 {
        try need(4)
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return v
    }

    public mutating func readUInt64() throws(ByteReaderError) -> UInt64 {
        try need(8)
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return v
    }

    public mutating func readUInt16LE() throws(ByteReaderError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    public mutating func readUInt32LE() throws(ByteReaderError) -> UInt32 {
        try need(4)
        var v: UInt32 = 0
        for i in (0..<4).reversed() { v = v << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return v
    }

    public mutating func readUInt64LE() throws(ByteReaderError) -> UInt64 {
        try need(8)
        var v: UInt64 = 0
        for i in (0..<8).reversed() { v = v << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return v
    }

    public mutating func readInt64() throws(ByteReaderError) -> Int64 {
        Int64(bitPattern: try readUInt64())
    }

    public mutating func readDouble() throws(ByteReaderError) -> Double {
        Double(bitPattern: try readUInt64())
    }

    public mutating func readBytes(_ n: Int) throws(ByteReaderError) -> ArraySlice<UInt8> {
        try need(n)
        defer { offset += n }
        return bytes[offset..<offset + n]
    }

    public mutating func skip(_ n: Int) throws(ByteReaderError) {
        try need(n)
        offset += n
    }

    /// Reads an unsigned LEB128 varint (at most 10 bytes).
    public mutating func readVarint() throws(ByteReaderError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readUInt8()
            if shift == 63 && byte > 1 {
                throw ByteReaderError(wanted: 0, offset: offset - 1, remaining: remaining)
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw ByteReaderError(wanted: 0, offset: offset - 1, remaining: remaining) }
        }
    }

    /// Reads a varint length followed by that many bytes of UTF-8.
    public mutating func readString() throws(ByteReaderError) -> String {
        let n = try readVarint()
        guard n <= UInt64(remaining) else {
            throw ByteReaderError(wanted: Int(clamping: n), offset: offset, remaining: remaining)
        }
        return String(decoding: try readBytes(Int(n)), as: UTF8.self)
    }

    /// Reads a varint length followed by that many bytes.
    public mutating func readLengthPrefixedBytes() throws(ByteReaderError) -> [UInt8] {
        let n = try readVarint()
        guard n <= UInt64(remaining) else {
            throw ByteReaderError(wanted: Int(clamping: n), offset: offset, remaining: remaining)
        }
        return Array(try readBytes(Int(n)))
    }
}
