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
        /// Bytes after `validLength`: a torn tail, dropped on recovery (unless `damage` is set).
        public var tornBytes: Int
        public var generation: UInt64
        /// Set when intact entries follow the unreadable bytes: damage, not an interrupted append.
        public var damage: Damage?
    }

    /// Unreadable bytes with intact entries after them. An interrupted append only ever leaves
    /// unreadable bytes at the end, so this is damage to acknowledged data: never dropped silently.
    public struct Damage: Sendable, Equatable {
        /// The first byte that is not part of an intact entry.
        public var offset: Int
        /// Where the next intact entry after it starts.
        public var nextIntactEntry: Int
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

    /// Frames one payload as an entry. Other append-only files of ours (the daemon's user log) frame
    /// their entries the same way, behind a magic of their own.
    public static func frame(_ payload: [UInt8], into out: inout [UInt8]) {
        let n = UInt32(payload.count)
        let crc = CRC32.checksum(payload)
        out.reserveCapacity(out.count + entryHeaderSize + payload.count)
        for s in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: n >> UInt32(s))) }
        for s in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(s))) }
        out.append(contentsOf: payload)
    }

    /// The payload length of the intact entry at `offset` (its length in range, all of it present,
    /// its CRC matching), or nil.
    static func intactEntry(in bytes: [UInt8], at offset: Int) -> Int? {
        guard offset >= 0, bytes.count - offset >= entryHeaderSize else { return nil }
        var h = ByteReader(bytes, offset: offset)
        guard let length = try? h.readUInt32(), let crc = try? h.readUInt32() else { return nil }
        let len = Int(length)
        guard len > 0, len <= maxEntrySize, bytes.count - offset - entryHeaderSize >= len else { return nil }
        let start = offset + entryHeaderSize
        return CRC32.checksum(bytes[start..<(start + len)]) == crc ? len : nil
    }

    /// The first offset after `offset` where an intact entry starts: how a reader resynchronises
    /// after damage. A false match needs a length in range and a matching CRC-32 (about 2^-32).
    static func nextIntactEntry(in bytes: [UInt8], after offset: Int) -> Int? {
        var candidate = offset + 1
        while bytes.count - candidate >= entryHeaderSize {
            if intactEntry(in: bytes, at: candidate) != nil { return candidate }
            candidate += 1
        }
        return nil
    }

    /// Reads every intact entry up to the first that is incomplete or fails its checksum. When
    /// nothing intact follows, the rest is the torn tail of an interrupted append; when an intact
    /// entry does follow, the scan reports `damage` (and recovery refuses to start).
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
        let found = entries(in: bytes, from: headerSize)
        return Scan(entries: found.entries, validLength: found.validLength, tornBytes: bytes.count - found.validLength,
                    generation: generation, damage: found.damage)
    }

    /// The intact entries from `offset` on, up to the first that is incomplete or fails its checksum;
    /// where they end; and `damage` when an intact entry follows the unreadable bytes.
    public static func entries(in bytes: [UInt8], from offset: Int)
        -> (entries: [ArraySlice<UInt8>], validLength: Int, damage: Damage?)
    {
        var entries: [ArraySlice<UInt8>] = []
        var offset = offset
        while let len = intactEntry(in: bytes, at: offset) {
            entries.append(bytes[(offset + entryHeaderSize)..<(offset + entryHeaderSize + len)])
            offset += entryHeaderSize + len
        }
        let damage = nextIntactEntry(in: bytes, after: offset).map { Damage(offset: offset, nextIntactEntry: $0) }
        return (entries, offset, damage)
    }
}
