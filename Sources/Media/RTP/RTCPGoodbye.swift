// RTCP BYE (RFC 3550 §6.6): a source says it is leaving the session.
//
//   |V=2|P|    SC   |   PT=BYE=203  |             length            |
//   |                           SSRC/CSRC                           |  SC × 32 bits
//   |     length    |               reason for leaving             ...  optional
//
// The reason is a length-prefixed UTF-8 string padded with zeros to a 32-bit boundary.

import ZoneCore

/// A BYE: these sources have stopped sending.
public struct RTCPGoodbye: Equatable, Sendable {
    public static let packetType: UInt8 = 203

    /// The sources that leave (at most 31).
    public var sources: [UInt32]
    /// Why, for people reading a capture; nil when absent.
    public var reason: String?

    public init(sources: [UInt32], reason: String? = nil) {
        precondition(sources.count <= 31, "a BYE names at most 31 sources")
        precondition((reason?.utf8.count ?? 0) <= 255, "a BYE reason is at most 255 bytes")
        self.sources = sources
        self.reason = reason
    }

    init(body r: inout ByteReader, count: Int) throws(ByteReaderError) {
        sources = []
        for _ in 0..<count { sources.append(try r.readUInt32()) }
        reason = nil
        if r.remaining > 0 {
            let length = Int(try r.readUInt8())
            reason = String(validating: try r.readBytes(length), as: UTF8.self)  // nil if not UTF-8
        }
    }

    func writeBody(to w: inout ByteWriter) {
        for source in sources { w.writeUInt32(source) }
        guard let reason else { return }
        let bytes = Array(reason.utf8)
        w.writeUInt8(UInt8(bytes.count))
        w.writeBytes(bytes)
        let used = 1 + bytes.count
        w.writeBytes(repeatElement(0, count: (4 - used % 4) % 4))
    }
}
