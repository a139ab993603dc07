import ZoneCore

/// Every intact entry of a damaged journal: what `zonertc store repair` keeps.
///
/// Reads entries as `JournalFormat.scan` does; at unreadable bytes it resynchronises on the next
/// offset where an intact entry starts (`JournalFormat.nextIntactEntry`) and goes on from there,
/// noting each stretch it skipped. Pure: bytes in, entries and a report out.
public struct JournalSalvage: Sendable {
    /// A stretch of unreadable bytes that was skipped.
    public struct Dropped: Sendable, Equatable {
        /// Where the unreadable bytes start in the original file.
        public var offset: Int
        public var bytes: Int
        /// Entries that stretch held, read from the length fields it starts with (they may be
        /// damaged too, so this is an estimate; at least 1).
        public var estimatedEntries: Int
        /// True when nothing intact follows: the torn tail of an interrupted append.
        public var isTail: Bool
    }

    public var generation: UInt64
    /// Payloads of every intact entry, in file order.
    public var entries: [ArraySlice<UInt8>]
    public var dropped: [Dropped]

    public init(_ bytes: [UInt8]) throws(JournalFormat.FormatError) {
        guard bytes.count >= JournalFormat.headerSize,
              Array(bytes[0..<JournalFormat.magic.count]) == JournalFormat.magic else {
            throw JournalFormat.FormatError(description: "not a ZoneRTC journal (no magic): nothing to salvage")
        }
        var r = ByteReader(bytes, offset: JournalFormat.magic.count)
        generation = (try? r.readUInt64()) ?? 0
        entries = []
        dropped = []
        var offset = JournalFormat.headerSize
        while offset < bytes.count {
            if let len = JournalFormat.intactEntry(in: bytes, at: offset) {
                let start = offset + JournalFormat.entryHeaderSize
                entries.append(bytes[start..<(start + len)])
                offset = start + len
                continue
            }
            let next = JournalFormat.nextIntactEntry(in: bytes, after: offset)
            let end = next ?? bytes.count
            dropped.append(Dropped(offset: offset, bytes: end - offset,
                                   estimatedEntries: Self.entriesBetween(bytes, offset, end), isTail: next == nil))
            offset = end
        }
    }

    /// Hops over the length fields from `start` while each lands inside the stretch.
    private static func entriesBetween(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Int {
        var count = 0
        var offset = start
        while end - offset >= JournalFormat.entryHeaderSize {
            var h = ByteReader(bytes, offset: offset)
            guard let length = try? h.readUInt32(), length > 0 else { break }
            let next = offset + JournalFormat.entryHeaderSize + Int(length)
            guard next <= end else { break }
            count += 1
            offset = next
        }
        return max(count, 1)
    }

    /// The journal written afresh: the header and the intact entries, framed again.
    public var repairedJournal: [UInt8] {
        var out = JournalFormat.header(generation: generation)
        for payload in entries { JournalFormat.frame(Array(payload), into: &out) }
        return out
    }
}
