// RTCP reception report blocks (RFC 3550 §6.4.1), carried by SR and RR packets.
//
//   |                 SSRC_1 (SSRC of first source)                 |
//   | fraction lost |       cumulative number of packets lost       |
//   |           extended highest sequence number received           |
//   |                      interarrival jitter                      |
//   |                         last SR (LSR)                         |
//   |                   delay since last SR (DLSR)                  |

import ZoneCore

/// One reception report about one source.
public struct RTCPReportBlock: Equatable, Sendable {
    public static let size = 24

    public var ssrc: UInt32
    /// The fraction of packets lost since the previous report, in 1/256.
    public var fractionLost: UInt8
    /// Packets lost since reception began (24-bit signed: duplicates can make it negative).
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    public var jitter: UInt32
    public var lastSenderReport: UInt32
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, extendedHighestSequence: UInt32 = 0,
                jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        precondition((-(1 << 23)..<(1 << 23)).contains(cumulativeLost), "cumulative lost is 24 bits")
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    init(reading r: inout ByteReader) throws(ByteReaderError) {
        ssrc = try r.readUInt32()
        let word = try r.readUInt32()
        fractionLost = UInt8(word >> 24)
        cumulativeLost = Int32(bitPattern: word << 8) >> 8  // sign-extend 24 bits
        extendedHighestSequence = try r.readUInt32()
        jitter = try r.readUInt32()
        lastSenderReport = try r.readUInt32()
        delaySinceLastSenderReport = try r.readUInt32()
    }

    func write(to w: inout ByteWriter) {
        w.writeUInt32(ssrc)
        w.writeUInt32(UInt32(fractionLost) << 24 | UInt32(bitPattern: cumulativeLost) & 0x00FF_FFFF)
        w.writeUInt32(extendedHighestSequence)
        w.writeUInt32(jitter)
        w.writeUInt32(lastSenderReport)
        w.writeUInt32(delaySinceLastSenderReport)
    }
}
