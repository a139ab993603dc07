import ZoneCore

/// The journal's on-disk framing.
///
/// A file starts with an 8-byte magic and the 8-byte generation it follows (the snapshot it
/// extends). Then entries, each `[u32 length][u32 CRC-32 of payload][payload]`, big-endian.
/// One entry is one acknowledged request's mutations: all of it replays, or none.
public enum JournalFormat {
    static let magic: [UInt8] = Array("ZRJRNL1\n".utf8)
    static let headerSize = 16
    static let entryHeaderSize = 8
    /// No single entry is larger than this; a length beyond it can only be damage.
    static let maxEntrySize = 64 * 1024 * 1024

    /// The result of scanning a journal file's bytes.
    public struct Scan: Sendable {
        /// Payloads of the intact entries, in order.
        public var entries: [ArraySlice<UInt8>]
        /// Offset just past the last intact entry: where the next append goes.
        public var validLength: Int
        /// Bytes after `validLength`: a torn tail, dropped on recovery.
        public var tornBytes: Int
        public var generation: UInt64
    }

    public struct FormatError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    static func header(generation: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: headerSize)
        w.writeBytes(magic)
        w.writeUInt64(generation)
        return w.bytes
    }

    /// Frames one payload as an entry.
    static func frame(_ payload: [UInt8], into out: inout [UInt8]) {
        let n = UInt32(payload.count)
        let crc = CRC32.checksum(payload)
        out.reserveCapacity(out.count + entryHeaderSize + payload.count)
        for s in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: n >> UInt32(s))) }
        for s in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(s))) }
        out.append(contentsOf: payload)
    }

    /// Reads every intact entry. The first entry that is incomplete or fails its checksum, and
    /// everything after it, is the torn tail of an interrupted append.
    public static func scan(_ bytes: [UInt8]) throws(FormatError) -> Scan {
        guard bytes.count >= headerSize else {
            if bytes.isEmpty || magic.starts(with: bytes.prefix(magic.count)) {
                // A header torn while the file was being created: nothing was ever acknowledged in it.
                return Scan(entries: [], validLength: 0, tornBytes: bytes.count, generation: 0)
            }
            throw FormatError(description: "not a ZoneRTC journal (file too short and no magic)")
        }
        guard Array(bytes[0..<magic.count]) == magic else {
            throw FormatError(description: "not a ZoneRTC journal (bad magic)")
        }
        var r = ByteReader(bytes, offset: magic.count)
        let generation = (try? r.readUInt64()) ?? 0
        var entries: [ArraySlice<UInt8>] = []
        var offset = headerSize
        while bytes.count - offset >= entryHeaderSize {
            var h = ByteReader(bytes, offset: offset)
            guard let length = try? h.readUInt32(), let crc = try? h.readUInt32() else { break }
            let len = Int(length)
            if len == 0 || len > maxEntrySize || bytes.count - offset - entryHeaderSize < len { break }
            let payload = bytes[(offset + entryHeaderSize)..<(offset + entryHeaderSize + len)]
            guard CRC32.checksum(payload) == crc else { break }
            entries.append(payload)
            offset += entryHeaderSize + len
        }
        return Scan(entries: entries, validLength: offset, tornBytes: bytes.count - offset, generation: generation)
    }
}
