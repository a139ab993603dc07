// Interoperability with a real RTP sender: ffmpeg's RTP muxer sent the fixtures over loopback
// (commands in Fixtures/README.md) and every datagram was recorded (2-byte length + packet).
// Our RTP parser and VP8 (RFC 7741) and H.264 (RFC 6184) depacketizers, through the jitter
// buffer, must rebuild exactly the frames of the files ffmpeg read.

import Foundation
import Testing
import ZoneCore
@testable import Media

/// The datagrams of a recording: each a 2-byte big-endian length and the packet.
func recordedDatagrams(_ name: String) throws -> [[UInt8]] {
    let bytes = try Fixture.bytes(name)
    var out: [[UInt8]] = []
    var i = 0
    while i + 2 <= bytes.count {
        let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
        out.append(Array(bytes[(i + 2)..<(i + 2 + n)]))
        i += 2 + n
    }
    return out
}

/// Frames out of a jitter buffer fed `packets` 1 ms apart, then drained.
func receive<D: RTPDepacketizer>(_ packets: [RTPPacket], _ depacketizer: D) -> [JitterBufferEvent] {
    let clock = ManualClock()
    var buffer = JitterBuffer(depacketizer: depacketizer)
    var events: [JitterBufferEvent] = []
    for packet in packets {
        buffer.insert(packet, now: clock.now())
        events += buffer.poll(now: clock.now())
        clock.advance(by: .milliseconds(1))
    }
    clock.advance(by: .seconds(1))
    return events + buffer.poll(now: clock.now())
}

@Suite("ffmpeg RTP interop")
struct FFmpegRTPTests {
    @Test func vp8FromFFmpeg() throws {
        let packets = try recordedDatagrams("rtp/vp8.rtpdump").map { try RTPPacket(parsing: $0) }
        #expect(packets.allSatisfy { $0.payloadType == 96 && $0.ssrc == 305_419_896 })
        #expect(packets.first?.sequenceNumber == 65500)  // the run wraps the sequence number
        let expected = try IVFReader.read(Fixture.bytes("vp8-320x240-60.ivf")).frames.map(\.bytes)
        let events = receive(packets, VP8Depacketizer())
        #expect(events == expected.indices.map { i in
            guard case .frame(let f) = events[i] else { return events[i] }
            return .frame(ReceivedFrame(bytes: expected[i], rtpTimestamp: f.rtpTimestamp,
                                        sequenceNumbers: f.sequenceNumbers))
        })
        #expect(events.count == 60)
    }

    @Test func h264FromFFmpeg() throws {
        let packets = try recordedDatagrams("rtp/h264.rtpdump").map { try RTPPacket(parsing: $0) }
        #expect(packets.allSatisfy { $0.payloadType == 97 })
        let units = try AnnexBReader.read(Fixture.bytes("h264-320x240-60.h264"))
        let events = receive(packets, H264Depacketizer())
        let frames = events.compactMap { if case .frame(let f) = $0 { f.bytes } else { nil } }
        #expect(events.count == 60 && frames.count == 60)
        #expect(try frames.map { try AnnexBReader.read($0).flatMap(\.nalUnits) } == units.map(\.nalUnits))
    }
}

/// For a manual cross-check against ffmpeg as the receiver (see Fixtures/README.md): with
/// ZONERTC_DUMP_RTP_DIR set, writes our VP8 and H.264 packetizations of the fixtures there, in
/// the recordings' format. Without it, only checks that the packets parse back.
@Test func dumpOurPacketsForFFmpeg() throws {
    var vp8 = VP8Packetizer()
    var h264 = H264Packetizer()
    var random = SeededRandom(seed: 99)
    var vp8Sequencer = RTPSequencer(payloadType: 96, random: &random)
    var h264Sequencer = RTPSequencer(payloadType: 97, random: &random)
    var vp8Packets: [RTPPacket] = []
    var h264Packets: [RTPPacket] = []
    for (i, frame) in try IVFReader.read(Fixture.bytes("vp8-320x240-60.ivf")).frames.enumerated() {
        vp8Packets += vp8Sequencer.packets(for: try vp8.packetize(frame.bytes), mediaTimestamp: Int64(i) * 3000)
    }
    for (i, unit) in try AnnexBReader.read(Fixture.bytes("h264-320x240-60.h264")).enumerated() {
        h264Packets += h264Sequencer.packets(for: try h264.packetize(unit.bytes), mediaTimestamp: Int64(i) * 3000)
    }
    for packet in vp8Packets + h264Packets { #expect(try RTPPacket(parsing: packet.serialized()) == packet) }
    guard let directory = ProcessInfo.processInfo.environment["ZONERTC_DUMP_RTP_DIR"] else { return }
    for (name, packets) in [("ours-vp8.rtpdump", vp8Packets), ("ours-h264.rtpdump", h264Packets)] {
        let bytes = packets.flatMap { p in
            let b = p.serialized()
            return [UInt8(b.count >> 8), UInt8(b.count & 0xFF)] + b
        }
        try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
    }
}
