// Seeded mutation fuzzing (20,000 mutations in all) of the IVF reader, the Annex B splitter,
// the RTP and RTCP parsers and the depacketizers: no input may crash them, and every failure is
// a `MediaError`. The seeds are fixed, so a failure reproduces.

import Testing
import ZoneCore
@testable import Media
import TestSupport

/// Applies one to four random edits: flips, boundary values, insertions, deletions, truncation.
func mutate(_ input: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
    var bytes = input
    for _ in 0..<(1 + Int(random.next() % 4)) {
        let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
        switch random.next() % 7 {
        case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << (random.next() % 8))
        case 1 where !bytes.isEmpty: bytes[position] = [0, 1, 0x7F, 0x80, 0xFF][Int(random.next() % 5)]
        case 2 where !bytes.isEmpty: bytes[position] = UInt8(truncatingIfNeeded: random.next())
        case 3:
            let inserted = (0..<(1 + random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            bytes.insert(contentsOf: inserted, at: position)
        case 4 where !bytes.isEmpty:
            bytes.removeSubrange(position..<min(bytes.count, position + 1 + Int(random.next() % 16)))
        case 5: bytes = Array(bytes.prefix(position))
        default:
            if bytes.count >= 4 {  // a plausible length field: write a big little/big-endian number
                let value = UInt32(truncatingIfNeeded: random.next()) >> (random.next() % 32)
                let at = min(position, bytes.count - 4)
                for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
            }
        }
    }
    return bytes
}

/// Runs `body` on `count` mutations of the samples; any thrown error must be a MediaError.
func fuzz(_ samples: [[UInt8]], count: Int, seed: UInt64, _ body: ([UInt8]) throws -> Void) -> (ok: Int, failed: Int) {
    var random = SeededRandom(seed: seed)
    var ok = 0, failed = 0
    for i in 0..<count {
        let input = mutate(samples[i % samples.count], &random)
        do {
            try body(input)
            ok += 1
        } catch is MediaError {
            failed += 1
        } catch {
            Issue.record("untyped error \(error) on mutation \(i)")
        }
    }
    return (ok, failed)
}

@Suite("Fuzz")
struct FuzzTests {
    @Test func ivfReader() throws {
        let file = try Fixture.bytes("vp8-320x240-60.ivf")
        let samples = [Array(file.prefix(32 + 12 + 5090 + 12 + 62 + 12 + 200)), Array(file.prefix(200))]
        let result = fuzz(samples, count: 4000, seed: 1) { bytes in
            _ = try IVFReader.read(bytes, maxFrameSize: 1 << 20)
            var random = SeededRandom(seed: UInt64(bytes.count))
            _ = try readIVF(InputSplit.random.pieces(bytes, seed: random.next()))
        }
        #expect(result.ok > 0 && result.failed > 0)
    }

    @Test func annexBSplitter() throws {
        let file = try Fixture.bytes("h264-320x240-60.h264")
        let samples = [Array(file.prefix(8000)), Array(file.prefix(700))]
        let result = fuzz(samples, count: 4000, seed: 2) { bytes in
            let whole = try AnnexBReader.read(bytes)
            #expect(try readAnnexB(InputSplit.random.pieces(bytes, seed: 5)) == whole)
        }
        #expect(result.ok > 0 && result.failed > 0)
    }

    @Test func rtpAndRTCPParsers() {
        let rtp = [
            RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, marker: true, csrcs: [4, 5],
                      headerExtension: RTPHeaderExtension(profile: 0xBEDE, data: [1, 2, 3, 4]), payload: [9, 9, 9],
                      paddingLength: 3).serialized(),
            RTPPacket(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, payload: Array(0..<40)).serialized(),
        ]
        let block = RTCPReportBlock(ssrc: 1, fractionLost: 2, cumulativeLost: 3)
        let rtcp = [RTCPPacket.serializeCompound([
            .senderReport(RTCPSenderReport(ssrc: 1, ntpTimestamp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5,
                                           reports: [block])),
            .receiverReport(RTCPReceiverReport(ssrc: 1, reports: [block])),
            .nack(RTCPGenericNack(senderSSRC: 1, mediaSSRC: 2, lost: [1, 2, 3, 40])),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 2)),
        ])]
        let rtpResult = fuzz(rtp, count: 4000, seed: 3) { bytes in
            let packet = try RTPPacket(parsing: bytes)
            #expect(try RTPPacket(parsing: packet.serialized()) == packet)
        }
        let rtcpResult = fuzz(rtcp, count: 4000, seed: 4) { bytes in
            let packets = try RTCPPacket.parseCompound(bytes)
            #expect(try RTCPPacket.parseCompound(RTCPPacket.serializeCompound(packets)) == packets)
        }
        #expect(rtpResult.ok > 0 && rtpResult.failed > 0 && rtcpResult.ok > 0 && rtcpResult.failed > 0)
    }

    @Test func depacketizers() throws {
        let vp8Frames = try IVFReader.read(Fixture.bytes("vp8-320x240-60.ivf")).frames.prefix(3).map(\.bytes)
        let h264Units = try AnnexBReader.read(Fixture.bytes("h264-320x240-60.h264")).prefix(3)
        var vp8 = VP8Packetizer(maxPayloadSize: 300)
        let h264 = H264Packetizer(maxPayloadSize: 300)
        var generic = GenericPacketizer(maxPayloadSize: 300)
        var frames: [[[UInt8]]] = []
        for frame in vp8Frames { frames.append(try vp8.packetize(frame).map(\.payload)) }
        for unit in h264Units { frames.append(try h264.packetize(nalUnits: unit.nalUnits).map(\.payload)) }
        for frame in vp8Frames { frames.append(try generic.packetize(frame).map(\.payload)) }
        var random = SeededRandom(seed: 6)
        var failures = 0
        for i in 0..<4000 {
            var payloads = frames[i % frames.count]
            let victim = Int(random.next() % UInt64(payloads.count))
            payloads[victim] = mutate(payloads[victim], &random)
            if random.chance(0.2) { payloads.swapAt(victim, Int(random.next() % UInt64(payloads.count))) }
            if random.chance(0.1) { payloads.remove(at: victim) }
            do {
                var v = VP8Depacketizer(), h = H264Depacketizer(), g = GenericDepacketizer()
                switch (i % frames.count) / 3 {
                case 0: _ = v.startsFrame(payloads.first ?? []); _ = try v.depacketize(payloads)
                case 1: _ = h.startsFrame(payloads.first ?? []); _ = try h.depacketize(payloads)
                default: _ = g.startsFrame(payloads.first ?? []); _ = try g.depacketize(payloads)
                }
            } catch {
                failures += 1  // typed: depacketize throws(MediaError)
            }
        }
        #expect(failures > 0)
    }
}

@Suite("Fuzz, beyond the 20,000")
struct ExtraFuzzTests {
    @Test func y4mReader() throws {
        let file = try Fixture.bytes("testsrc-32x24-5.y4m")
        let result = fuzz([Array(file.prefix(2500))], count: 2000, seed: 8) { bytes in
            let whole = try Y4MReader.read(bytes)
            #expect(try readY4M(InputSplit.random.pieces(bytes, seed: 9)) == whole)
        }
        #expect(result.ok > 0 && result.failed > 0)
    }

    /// Hostile packet streams (random sequence numbers, timestamps, markers, payloads) must not
    /// trap the jitter buffer, and it must never hold more than its bound or emit out of order.
    @Test func jitterBufferUnderHostileStreams() {
        var random = SeededRandom(seed: 10)
        for _ in 0..<200 {
            let clock = ManualClock()
            var buffer = JitterBuffer(depacketizer: GenericDepacketizer(),
                                      configuration: .init(latency: .milliseconds(30), maxPackets: 64))
            var nacks = NackGenerator(configuration: .init(maxMissing: 200))
            var base = UInt16(truncatingIfNeeded: random.next())
            var lastEmitted: UInt64?
            for _ in 0..<100 {
                base &+= UInt16(truncatingIfNeeded: random.next() % 5) &- 1
                let sequence = random.chance(0.05) ? UInt16(truncatingIfNeeded: random.next()) : base
                let payload = (0..<Int(random.next() % 6)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let packet = RTPPacket(payloadType: 96, sequenceNumber: sequence, timestamp: UInt32(random.next() % 4),
                                       ssrc: 1, marker: random.chance(0.4), payload: payload)
                buffer.insert(packet, now: clock.now())
                nacks.received(sequenceNumber: sequence, now: clock.now())
                _ = nacks.poll(now: clock.now())
                for case .frame(let frame) in buffer.poll(now: clock.now()) {
                    #expect(lastEmitted.map { frame.sequenceNumbers.lowerBound > $0 } ?? true)
                    lastEmitted = frame.sequenceNumbers.upperBound
                }
                #expect(buffer.count <= 64)
                clock.advance(by: .milliseconds(Int64(random.next() % 20)))
            }
        }
    }
}
