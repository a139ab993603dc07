// RTP data packets (RFC 3550 §5.1 fixed header, §5.3.1 header extension; padding per §5.1 "P").
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   |V=2|P|X|  CC   |M|     PT      |       sequence number         |
//   |                           timestamp                           |
//   |           synchronization source (SSRC) identifier            |
//   |            contributing source (CSRC) identifiers             |  CC × 32 bits
//   |  defined by profile           |           length              |  if X (length in words)
//   |                        header extension                       |
//   |                            payload   ...   | padding | count  |  if P

import ZoneCore

/// An RTP header extension (RFC 3550 §5.3.1), kept as its profile word and raw data; the
/// one-byte and two-byte element forms (RFC 8285) are left to their users.
public struct RTPHeaderExtension: Equatable, Sendable {
    /// The 16 "defined by profile" bits (0xBEDE for RFC 8285 one-byte elements).
    public var profile: UInt16
    /// The extension data; its length is a multiple of four bytes.
    public var data: [UInt8]

    public init(profile: UInt16, data: [UInt8]) {
        precondition(data.count % 4 == 0 && data.count / 4 <= Int(UInt16.max),
                     "an RTP header extension is a whole number of 32-bit words")
        self.profile = profile
        self.data = data
    }
}

/// An RTP packet: fixed header, CSRCs, optional extension, payload; padding is removed on parse.
public struct RTPPacket: Equatable, Sendable {
    public static let version: UInt8 = 2
    public static let fixedHeaderSize = 12

    public var marker: Bool
    /// The payload type (7 bits).
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// Contributing sources (at most 15).
    public var csrcs: [UInt32]
    public var headerExtension: RTPHeaderExtension?
    public var payload: [UInt8]
    /// How many padding bytes (count byte included) to append when serializing; the parser
    /// records the count it removed. Zero means no padding and the P bit clear.
    public var paddingLength: UInt8

    public init(payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
                marker: Bool = false, csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil,
                payload: [UInt8] = [], paddingLength: UInt8 = 0) {
        precondition(payloadType < 128 && csrcs.count <= 15, "RTP payload type is 7 bits, CSRC count 4 bits")
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.payload = payload
        self.paddingLength = paddingLength
    }

    /// Parses one RTP packet from a datagram.
    public init(parsing bytes: [UInt8]) throws(MediaError) {
        if let first = bytes.first, first >> 6 != Self.version {
            throw MediaError(.badMagic, at: 0, "RTP version is \(first >> 6), not 2")
        }
        var r = ByteReader(bytes)
        let hasPadding: Bool
        do throws(ByteReaderError) {
            let b0 = try r.readUInt8()
            hasPadding = b0 & 0x20 != 0
            let b1 = try r.readUInt8()
            marker = b1 & 0x80 != 0
            payloadType = b1 & 0x7F
            sequenceNumber = try r.readUInt16()
            timestamp = try r.readUInt32()
            ssrc = try r.readUInt32()
            csrcs = []
            for _ in 0..<Int(b0 & 0x0F) { csrcs.append(try r.readUInt32()) }
            if b0 & 0x10 != 0 {
                let profile = try r.readUInt16()
                let words = Int(try r.readUInt16())
                headerExtension = RTPHeaderExtension(profile: profile, data: Array(try r.readBytes(words * 4)))
            } else {
                headerExtension = nil
            }
        } catch {
            throw MediaError(.truncated, at: error.offset, "RTP packet is truncated: \(error)")
        }
        var end = bytes.count
        paddingLength = 0
        if hasPadding {
            // The last byte counts the padding, itself included (RFC 3550 §5.1).
            guard let count = bytes.last, count > 0, Int(count) <= end - r.offset else {
                throw MediaError(.malformed, at: bytes.count - 1,
                                 "RTP padding count \(bytes.last ?? 0) does not fit the packet")
            }
            paddingLength = count
            end -= Int(count)
        }
        payload = Array(bytes[r.offset..<end])
    }

    /// The packet's bytes; padding, if any, is zeros followed by the count.
    public func serialized() -> [UInt8] {
        var w = ByteWriter(capacity: Self.fixedHeaderSize + 4 * csrcs.count + payload.count + Int(paddingLength) + 4)
        var b0 = Self.version << 6 | UInt8(csrcs.count)
        if paddingLength > 0 { b0 |= 0x20 }
        if headerExtension != nil { b0 |= 0x10 }
        w.writeUInt8(b0)
        w.writeUInt8((marker ? 0x80 : 0) | payloadType)
        w.writeUInt16(sequenceNumber)
        w.writeUInt32(timestamp)
        w.writeUInt32(ssrc)
        for csrc in csrcs { w.writeUInt32(csrc) }
        if let ext = headerExtension {
            w.writeUInt16(ext.profile)
            w.writeUInt16(UInt16(ext.data.count / 4))
            w.writeBytes(ext.data)
        }
        w.writeBytes(payload)
        if paddingLength > 0 {
            w.writeBytes(repeatElement(0, count: Int(paddingLength) - 1))
            w.writeUInt8(paddingLength)
        }
        return w.bytes
    }
}
