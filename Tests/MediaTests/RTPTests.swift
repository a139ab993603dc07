// RTP (RFC 3550 §5.1, §5.3.1) and RTCP (RFC 3550 §6.4, RFC 4585 §6.2.1, §6.3.1) codecs, and
// sequence-number unwrapping across the 16-bit wrap.

import Testing
import ZoneCore
@testable import Media

@Suite("RTP and RTCP")
struct RTPTests {
    @Test func parsesAKnownPacket() throws {
        // V=2 P=1 X=1 CC=1, M=1 PT=96, seq 0x1234, ts 0xDEADBEEF, SSRC 0x01020304, CSRC 0x0A0B0C0D,
        // extension 0xBEDE with one word, payload 3 bytes, 2 bytes of padding.
        let bytes: [UInt8] = [0xB1, 0xE0, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4, 0x0A, 0x0B, 0x0C, 0x0D,
                              0xBE, 0xDE, 0x00, 0x01, 0x10, 0xFF, 0x00, 0x00, 7, 8, 9, 0x00, 0x02]
        let packet = try RTPPacket(parsing: bytes)
        #expect(packet.marker && packet.payloadType == 96 && packet.sequenceNumber == 0x1234)
        #expect(packet.timestamp == 0xDEAD_BEEF && packet.ssrc == 0x0102_0304 && packet.csrcs == [0x0A0B_0C0D])
        #expect(packet.headerExtension == RTPHeaderExtension(profile: 0xBEDE, data: [0x10, 0xFF, 0, 0]))
        #expect(packet.payload == [7, 8, 9] && packet.paddingLength == 2)
        #expect(packet.serialized() == bytes)
    }

    @Test func roundTripsAndRejectsMalformedPackets() throws {
        let packet = RTPPacket(payloadType: 111, sequenceNumber: 65535, timestamp: 1, ssrc: 2, payload: [1, 2])
        #expect(try RTPPacket(parsing: packet.serialized()) == packet)
        #expect(packet.serialized().count == 14)
        expectError(.truncated, at: 0) { _ = try RTPPacket(parsing: []) }
        expectError(.truncated, at: 12) { _ = try RTPPacket(parsing: [0x81] + Array(repeating: 0, count: 11)) }
        expectError(.badMagic, at: 0) { _ = try RTPPacket(parsing: [0x40] + Array(repeating: 0, count: 11)) }
        // Padding count larger than the payload.
        expectError(.malformed, at: 13) { _ = try RTPPacket(parsing: [0xA0] + Array(repeating: 0, count: 11) + [1, 9]) }
        expectError(.malformed, at: 12) { _ = try RTPPacket(parsing: [0xA0] + Array(repeating: 0, count: 11) + [0]) }
        // Extension longer than the packet.
        let longExtension: [UInt8] = [0x90] + Array(repeating: 0, count: 11) + [0, 0, 0, 5]
        expectError(.truncated, at: 16) { _ = try RTPPacket(parsing: longExtension) }
    }

    @Test func compoundRTCP() throws {
        let block = RTCPReportBlock(ssrc: 9, fractionLost: 25, cumulativeLost: -3, extendedHighestSequence: 70000,
                                    jitter: 12, lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 65536)
        let packets: [RTCPPacket] = [
            .senderReport(RTCPSenderReport(ssrc: 1, ntpTimestamp: 0x0102_0304_0506_0708, rtpTimestamp: 90000,
                                           packetCount: 10, octetCount: 12000, reports: [block])),
            .receiverReport(RTCPReceiverReport(ssrc: 2, reports: [block, block])),
            .nack(RTCPGenericNack(senderSSRC: 2, mediaSSRC: 1, lost: [65534, 65535, 0, 17, 100])),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 2, mediaSSRC: 1)),
        ]
        let bytes = RTCPPacket.serializeCompound(packets)
        #expect(try RTCPPacket.parseCompound(bytes) == packets)
        // A BYE (PT 203) in the middle is read; an APP packet (PT 204) is skipped.
        let bye: [UInt8] = [0x81, 203, 0x00, 0x01, 0, 0, 0, 1]
        let app: [UInt8] = [0x80, 204, 0x00, 0x02, 0, 0, 0, 1] + Array("name".utf8)
        #expect(try RTCPPacket.parseCompound(packets[0].serialized() + bye + app + packets[3].serialized())
                == [packets[0], .goodbye(RTCPGoodbye(sources: [1])), packets[3]])
        // The PLI's exact bytes (RFC 4585 §6.3.1: FMT 1, PT 206, length 2).
        #expect(packets[3].serialized() == [0x81, 206, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1])
        // Length beyond the datagram, bad version.
        expectError(.truncated, at: 0) { _ = try RTCPPacket.parseCompound([0x81, 206, 0, 9, 0, 0, 0, 2]) }
        expectError(.badMagic, at: 8) { _ = try RTCPPacket.parseCompound(bye + [0x41, 206, 0, 0]) }
        expectError(.truncated, at: 8) { _ = try RTCPPacket.parseCompound(bye + [0x81]) }
        // An RR claiming a report block it does not carry.
        expectError(.truncated, at: 8) { _ = try RTCPPacket.parseCompound([0x81, 201, 0, 1, 0, 0, 0, 1]) }
    }

    @Test func nackPacksPIDAndBLP() {
        let nack = RTCPGenericNack(senderSSRC: 1, mediaSSRC: 2, lost: [65534, 65535, 0, 17, 100])
        #expect(nack.entries == [.init(packetID: 65534, lostBitmask: 0b11), .init(packetID: 17, lostBitmask: 0),
                                 .init(packetID: 100, lostBitmask: 0)])
        #expect(nack.lostSequenceNumbers == [65534, 65535, 0, 17, 100])
    }

    @Test func unwrapsAcrossTheWrap() {
        var unwrapper = SequenceUnwrapper()
        let input: [UInt16] = [65533, 65535, 65534, 0, 1, 65535, 3, 32768, 32770, 2]
        let output = input.map { unwrapper.unwrap($0) }
        let base: UInt64 = 65536 + 65533
        #expect(output.map { Int64($0) - Int64(base) } == [0, 2, 1, 3, 4, 2, 6, 32771, 32773, 5])
        #expect(unwrapper.highest == base + 32773)
    }
}
