// RTCP source description, SDES (RFC 3550 §6.5): per source a chunk of items; this module
// writes and reads the CNAME item (§6.5.1), which every compound packet must carry (§6.1).
//
//   |V=2|P|    SC   |  PT=SDES=202  |             length            |
//   |                          SSRC/CSRC_1                          |  chunk 1
//   |  type (1=CNAME) |   length    |   text …  | 0 (end) | padding |
//
// Each chunk ends with a zero byte and is padded with zeros to a 32-bit boundary.

import ZoneCore

/// An SDES packet: the CNAME of each source it describes.
public struct RTCPSourceDescription: Equatable, Sendable {
    public static let packetType: UInt8 = 202
    static let cnameItem: UInt8 = 1

    /// One chunk: a source and its canonical name (nil when the chunk has no CNAME item).
    public struct Chunk: Equatable, Sendable {
        public var ssrc: UInt32
        public var cname: String?

        public init(ssrc: UInt32, cname: String?) {
            self.ssrc = ssrc
            self.cname = cname
        }
    }

    public var chunks: [Chunk]

    public init(chunks: [Chunk]) {
        precondition(chunks.count <= 31, "an SDES holds at most 31 chunks")
        precondition(chunks.allSatisfy { ($0.cname?.utf8.count ?? 0) <= 255 }, "an SDES item is at most 255 bytes")
        self.chunks = chunks
    }

    /// One source's CNAME.
    public init(ssrc: UInt32, cname: String) {
        self.init(chunks: [Chunk(ssrc: ssrc, cname: cname)])
    }

    init(body r: inout ByteReader, count: Int) throws(ByteReaderError) {
        chunks = []
        for _ in 0..<count {
            let chunkStart = r.offset
            var chunk = Chunk(ssrc: try r.readUInt32(), cname: nil)
            while true {
                let type = try r.readUInt8()
                if type == 0 { break }
                let length = Int(try r.readUInt8())
                let text = try r.readBytes(length)
                // A CNAME that is not UTF-8 is ignored rather than rewritten (so it round-trips).
                if type == Self.cnameItem { chunk.cname = String(validating: text, as: UTF8.self) }
            }
            // Skip the zeros that pad the chunk to a 32-bit boundary.
            let used = r.offset - chunkStart
            _ = try r.readBytes((4 - used % 4) % 4)
            chunks.append(chunk)
        }
    }

    func writeBody(to w: inout ByteWriter) {
        for chunk in chunks {
            var used = 4
            w.writeUInt32(chunk.ssrc)
            if let cname = chunk.cname {
                let bytes = Array(cname.utf8)
                w.writeUInt8(Self.cnameItem)
                w.writeUInt8(UInt8(bytes.count))
                w.writeBytes(bytes)
                used += 2 + bytes.count
            }
            w.writeUInt8(0)  // end of items
            used += 1
            w.writeBytes(repeatElement(0, count: (4 - used % 4) % 4))
        }
    }
}
