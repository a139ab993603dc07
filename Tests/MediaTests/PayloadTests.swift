// Packetizers and depacketizers (RFC 7741 VP8, RFC 6184 H.264, our generic format): frames →
// RTP packets → seeded reordering and duplication → jitter buffer → frames, byte for byte.

import Testing
import ZoneCore
@testable import Media

/// Packetizes `frames`, shuffles and duplicates the packets (seeded), feeds them to a jitter
/// buffer on a manual clock and returns what comes out.
func roundTrip<P: RTPPacketizer, D: RTPDepacketizer>(
    _ frames: [[UInt8]], packetizer: P, depacketizer: D, seed: UInt64, initialSequence: UInt16? = nil
) throws -> (frames: [[UInt8]], events: [JitterBufferEvent], packets: [RTPPacket]) {
    var packetizer = packetizer
    var random = SeededRandom(seed: seed)
    var sequencer = RTPSequencer(payloadType: 96, random: &random)
    if let initialSequence {
        sequencer = RTPSequencer(ssrc: sequencer.ssrc, payloadType: 96, initialSequenceNumber: initialSequence,
                                 timestampOffset: sequencer.timestampOffset)
    }
    var packets: [RTPPacket] = []
    for (index, frame) in frames.enumerated() {
        let chunks = try packetizer.packetize(frame)
        #expect(chunks.allSatisfy { $0.payload.count <= packetizer.maxPayloadSize })
        packets += sequencer.packets(for: chunks, mediaTimestamp: Int64(index) * 3000)
    }
    // Reorder within windows of up to 8 packets and duplicate about one in ten.
    var delivered: [RTPPacket] = []
    var start = 0
    while start < packets.count {
        let end = min(packets.count, start + 1 + Int(random.next() % 8))
        var window = Array(packets[start..<end])
        window.shuffle(using: &random)
        for packet in window {
            delivered.append(packet)
            if random.chance(0.1) { delivered.insert(packet, at: max(0, delivered.count - 1 - Int(random.next() % 4))) }
        }
        start = end
    }
    let clock = ManualClock()
    var buffer = JitterBuffer(depacketizer: depacketizer, configuration: .init(latency: .milliseconds(100)))
    var events: [JitterBufferEvent] = []
    for packet in delivered {
        buffer.insert(try RTPPacket(parsing: packet.serialized()), now: clock.now())
        events += buffer.poll(now: clock.now())
        clock.advance(by: .milliseconds(1))
    }
    clock.advance(by: .milliseconds(100))
    events += buffer.poll(now: clock.now())
    #expect(buffer.count == 0)
    let out = events.compactMap { event -> [UInt8]? in
        if case .frame(let f) = event { return f.bytes }
        return nil
    }
    return (out, events, packets)
}

@Suite("Payload formats")
struct PayloadTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func vp8FixtureRoundTrips(seed: UInt64) throws {
        let frames = try IVFReader.read(Fixture.bytes("vp8-320x240-60.ivf")).frames.map(\.bytes)
        for mtu in [1200, 301] {
            let result = try roundTrip(frames, packetizer: VP8Packetizer(maxPayloadSize: mtu, initialPictureID: 32760),
                                       depacketizer: VP8Depacketizer(), seed: seed, initialSequence: 65500)
            #expect(result.frames == frames)
            #expect(result.events.count == frames.count)
        }
    }

    @Test func vp8Descriptor() throws {
        var packetizer = VP8Packetizer(maxPayloadSize: 10, initialPictureID: 0x1234)
        let chunks = try packetizer.packetize(Array(1...13))
        #expect(chunks.map(\.payload) == [[0x90, 0x80, 0x92, 0x34, 1, 2, 3, 4, 5, 6],
                                          [0x80, 0x80, 0x92, 0x34, 7, 8, 9, 10, 11, 12],
                                          [0x80, 0x80, 0x92, 0x34, 13]])
        #expect(chunks.map(\.marker) == [false, false, true])
        // A 7-bit PictureID, TL0PICIDX and TID/KEYIDX parse and serialize back.
        let bytes: [UInt8] = [0x90, 0xF0, 0x05, 0x11, 0x22]
        let (d, n) = try VP8PayloadDescriptor.parse(bytes + [0])
        #expect(n == 5 && d.pictureID == 5 && !d.longPictureID && d.tl0PictureIndex == 0x11)
        #expect(d.serialized() == bytes)
        var depacketizer = VP8Depacketizer()
        // The first packet must start partition 0; PictureIDs must agree.
        #expect(throws: MediaError.self) { try depacketizer.depacketize([chunks[1].payload]) }
        #expect(throws: MediaError.self) {
            try depacketizer.depacketize([chunks[0].payload, [0x80, 0x80, 0x92, 0x35, 7]])
        }
        #expect(try depacketizer.depacketize(chunks.map(\.payload)) == Array(1...13))
        #expect(VP8Depacketizer.isKeyframe([0x10, 0x00]) && !VP8Depacketizer.isKeyframe([0x10, 0x01]))
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func h264FixtureRoundTrips(seed: UInt64) throws {
        // Depacketized access units use four-byte start codes: compare with the units rebuilt so.
        let units = try AnnexBReader.read(Fixture.bytes("h264-320x240-60.h264"))
        let frames = units.map { AnnexBWriter.bytes(for: $0.nalUnits) }
        for mtu in [1200, 200] {
            let result = try roundTrip(frames, packetizer: H264Packetizer(maxPayloadSize: mtu),
                                       depacketizer: H264Depacketizer(), seed: seed)
            #expect(result.frames == frames)
            #expect(result.events.count == frames.count)
            let types = Set(result.packets.map { $0.payload[0] & 0x1F })
            #expect(types.isSuperset(of: [24, 28]))  // STAP-A for SPS/PPS/SEI, FU-A for big slices
        }
    }

    @Test func h264Packetization() throws {
        let sps = H264NALUnit(bytes: [0x67, 1, 2, 3]), pps = H264NALUnit(bytes: [0x68, 4])
        let idr = H264NALUnit(bytes: [0x65, 0x88] + Array(repeating: 7, count: 19))
        let chunks = try H264Packetizer(maxPayloadSize: 12).packetize(nalUnits: [sps, pps, idr])
        #expect(chunks[0].payload == [0x78, 0, 4, 0x67, 1, 2, 3, 0, 2, 0x68, 4])
        #expect(chunks[1].payload == [0x7C, 0x85, 0x88] + Array(repeating: 7, count: 9))
        #expect(chunks[2].payload == [0x7C, 0x45] + Array(repeating: 7, count: 10))
        #expect(chunks.map(\.marker) == [false, false, true])
        var depacketizer = H264Depacketizer()
        #expect(try depacketizer.depacketize(chunks.map(\.payload)) == AnnexBWriter.bytes(for: [sps, pps, idr]))
        #expect(throws: MediaError.self) { try depacketizer.depacketize([chunks[0].payload, chunks[2].payload]) }
        #expect(throws: MediaError.self) { try depacketizer.depacketize([chunks[1].payload]) }
        #expect(throws: MediaError.self) { try depacketizer.depacketize([[0x78, 0, 9, 1]]) }
        #expect(throws: MediaError.self) { try depacketizer.depacketize([[0x79, 0, 9, 1]]) }  // STAP-B
        // Which packets begin an access unit: STAP-A of SPS, the IDR's start fragment (its first
        // slice), not its end fragment, nor a slice with first_mb_in_slice != 0.
        #expect(depacketizer.startsFrame(chunks[0].payload) && depacketizer.startsFrame(chunks[1].payload))
        #expect(!depacketizer.startsFrame(chunks[2].payload))
        #expect(!depacketizer.startsFrame([0x41, 0x22, 1]) && depacketizer.startsFrame([0x41, 0x9A, 1]))
    }

    @Test(arguments: [UInt64(1), 2])
    func genericRoundTripsY4MAndRandomFrames(seed: UInt64) throws {
        let y4m = try Y4MReader.read(Fixture.bytes("testsrc-32x24-5.y4m")).frames.map(\.bytes)
        var random = SeededRandom(seed: seed)
        let randomFrames = (0..<40).map { _ in
            (0..<Int(random.next() % 3000)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        for frames in [y4m, randomFrames] {
            let result = try roundTrip(frames, packetizer: GenericPacketizer(maxPayloadSize: 500),
                                       depacketizer: GenericDepacketizer(), seed: seed)
            #expect(result.frames == frames)
        }
        let header = GenericPayloadHeader(isFirst: true, isLast: false, frameIndex: 0x3FFF)
        #expect(header.serialized() == [0xBF, 0xFF])
        #expect(try GenericPayloadHeader(parsing: [0xBF, 0xFF]) == header)
    }
}
