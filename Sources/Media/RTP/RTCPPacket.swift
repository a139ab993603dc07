// RTCP packets and compound packets (RFC 3550 §6.1 common header, §6.4 SR/RR; RFC 4585 §6.1
// feedback). Every RTCP packet starts:
//
//   |V=2|P|  RC/FMT |      PT       |   length (32-bit words − 1)   |
//
// A compound packet is several of them back to back in one datagram. Types this module does
// not know (APP, XR, other feedback formats) are skipped by their length.

import ZoneCore

/// One RTCP packet this module understands.
public enum RTCPPacket: Equatable, Sendable {
    /// SR, PT 200 (RFC 3550 §6.4.1).
    case senderReport(RTCPSenderReport)
    /// RR, PT 201 (RFC 3550 §6.4.2).
    case receiverReport(RTCPReceiverReport)
    /// Generic NACK, RTPFB PT 205 FMT 1 (RFC 4585 §6.2.1).
    case nack(RTCPGenericNack)
    /// PLI, PSFB PT 206 FMT 1 (RFC 4585 §6.3.1).
    case pictureLossIndication(RTCPPictureLossIndication)
    /// SDES, PT 202 (RFC 3550 §6.5); only CNAME items are kept.
    case sourceDescription(RTCPSourceDescription)
    /// BYE, PT 203 (RFC 3550 §6.6).
    case goodbye(RTCPGoodbye)

    /// Parses a compound RTCP packet; unknown packet types are skipped.
    public static func parseCompound(_ bytes: [UInt8]) throws(MediaError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        guard bytes.count >= 4 else {
            throw MediaError(.truncated, at: 0, "RTCP packet needs a 4-byte header, got \(bytes.count) bytes")
        }
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else {
                throw MediaError(.truncated, at: offset, "RTCP header needs 4 bytes, \(bytes.count - offset) left")
            }
            let b0 = bytes[offset]
            guard b0 >> 6 == 2 else {
                throw MediaError(.badMagic, at: offset, "RTCP version is \(b0 >> 6), not 2")
            }
            let count = Int(b0 & 0x1F)
            let type = bytes[offset + 1]
            let length = ((Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) + 1) * 4
            guard length <= bytes.count - offset else {
                throw MediaError(.truncated, at: offset,
                                 "RTCP packet of \(length) bytes runs beyond the datagram "
                                 + "(\(bytes.count - offset) left)")
            }
            var end = offset + length
            if b0 & 0x20 != 0 {
                let padding = Int(bytes[end - 1])
                guard padding > 0, padding <= length - 4 else {
                    throw MediaError(.malformed, at: end - 1, "RTCP padding count \(padding) does not fit the packet")
                }
                end -= padding
            }
            var r = ByteReader(bytes, offset: offset + 4, end: end)
            do {
                switch (type, UInt8(count)) {
                case (RTCPSenderReport.packetType, _):
                    packets.append(.senderReport(try RTCPSenderReport(body: &r, count: count)))
                case (RTCPReceiverReport.packetType, _):
                    packets.append(.receiverReport(try RTCPReceiverReport(body: &r, count: count)))
                case (RTCPGenericNack.packetType, RTCPGenericNack.format):
                    packets.append(.nack(try RTCPGenericNack(body: &r)))
                case (RTCPPictureLossIndication.packetType, RTCPPictureLossIndication.format):
                    packets.append(.pictureLossIndication(try RTCPPictureLossIndication(body: &r)))
                case (RTCPSourceDescription.packetType, _):
                    packets.append(.sourceDescription(try RTCPSourceDescription(body: &r, count: count)))
                case (RTCPGoodbye.packetType, _):
                    packets.append(.goodbye(try RTCPGoodbye(body: &r, count: count)))
                default:
                    break  // APP, XR, other feedback: skipped (RFC 3550 §6.1)
                }
            } catch {
                throw MediaError(.truncated, at: error.offset,
                                 "RTCP packet type \(type) at offset \(offset) is shorter than its contents")
            }
            offset += length
        }
        return packets
    }

    /// One packet's bytes, header included.
    public func serialized() -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        let count: Int, type: UInt8
        w.writeUInt32(0)  // header, filled in below
        switch self {
        case .senderReport(let sr):
            count = sr.reports.count; type = RTCPSenderReport.packetType; sr.writeBody(to: &w)
        case .receiverReport(let rr):
            count = rr.reports.count; type = RTCPReceiverReport.packetType; rr.writeBody(to: &w)
        case .nack(let nack):
            count = Int(RTCPGenericNack.format); type = RTCPGenericNack.packetType; nack.writeBody(to: &w)
        case .pictureLossIndication(let pli):
            count = Int(RTCPPictureLossIndication.format); type = RTCPPictureLossIndication.packetType
            pli.writeBody(to: &w)
        case .sourceDescription(let sdes):
            count = sdes.chunks.count; type = RTCPSourceDescription.packetType; sdes.writeBody(to: &w)
        case .goodbye(let bye):
            count = bye.sources.count; type = RTCPGoodbye.packetType; bye.writeBody(to: &w)
        }
        precondition(w.count % 4 == 0 && w.count / 4 - 1 <= Int(UInt16.max), "RTCP packets are whole 32-bit words")
        w.setUInt32(UInt32(2 << 30 | count << 24 | Int(type) << 16 | (w.count / 4 - 1)), at: 0)
        return w.bytes
    }

    /// A compound packet: the packets back to back.
    public static func serializeCompound(_ packets: [RTCPPacket]) -> [UInt8] {
        packets.flatMap { $0.serialized() }
    }
}
