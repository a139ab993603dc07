// RTCP feedback messages (RFC 4585 §6.1 common format): generic NACK (§6.2.1, RTPFB PT=205,
// FMT=1) and picture loss indication (§6.3.1, PSFB PT=206, FMT=1).
//
//   |V=2|P|   FMT   |       PT      |          length               |
//   |                  SSRC of packet sender                        |
//   |                  SSRC of media source                         |
//   :            Feedback Control Information (FCI)                 :
//
// A generic NACK's FCI is a list of (PID: first lost sequence number, BLP: bitmask of the 16
// following ones that are also lost).

import ZoneCore

/// A generic NACK: "these RTP sequence numbers did not arrive".
public struct RTCPGenericNack: Equatable, Sendable {
    public static let packetType: UInt8 = 205
    public static let format: UInt8 = 1

    /// One FCI entry: PID and the bitmask of following losses (bit i → PID + i + 1).
    public struct Entry: Equatable, Sendable {
        public var packetID: UInt16
        public var lostBitmask: UInt16

        public init(packetID: UInt16, lostBitmask: UInt16) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// A NACK for `lost` sequence numbers, packed into as few entries as their order allows
    /// (numbers within 16 after an entry's PID share its bitmask).
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lost: [UInt16]) {
        var entries: [Entry] = []
        for sequence in lost {
            if let last = entries.last {
                let distance = sequence &- last.packetID
                if (1...16).contains(distance) {
                    entries[entries.count - 1].lostBitmask |= 1 << (distance - 1)
                    continue
                }
                if distance == 0 { continue }
            }
            entries.append(Entry(packetID: sequence, lostBitmask: 0))
        }
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, entries: entries)
    }

    /// Every sequence number the NACK reports lost, in entry order.
    public var lostSequenceNumbers: [UInt16] {
        entries.flatMap { entry in
            [entry.packetID] + (0..<16).filter { entry.lostBitmask & (1 << $0) != 0 }.map { entry.packetID &+ $0 &+ 1 }
        }
    }

    init(body r: inout ByteReader) throws(ByteReaderError) {
        senderSSRC = try r.readUInt32()
        mediaSSRC = try r.readUInt32()
        entries = []
        while r.remaining >= 4 {
            entries.append(Entry(packetID: try r.readUInt16(), lostBitmask: try r.readUInt16()))
        }
    }

    func writeBody(to w: inout ByteWriter) {
        w.writeUInt32(senderSSRC)
        w.writeUInt32(mediaSSRC)
        for entry in entries {
            w.writeUInt16(entry.packetID)
            w.writeUInt16(entry.lostBitmask)
        }
    }
}

/// A picture loss indication: "send me a keyframe".
public struct RTCPPictureLossIndication: Equatable, Sendable {
    public static let packetType: UInt8 = 206
    public static let format: UInt8 = 1

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    init(body r: inout ByteReader) throws(ByteReaderError) {
        senderSSRC = try r.readUInt32()
        mediaSSRC = try r.readUInt32()
    }

    func writeBody(to w: inout ByteWriter) {
        w.writeUInt32(senderSSRC)
        w.writeUInt32(mediaSSRC)
    }
}
