// MediaSender → MediaReceiver in memory on a manual clock: the frames that come out must be the
// frames that went in, byte for byte and pts for pts, with no loss, with seeded loss repaired by
// NACKs, with reordering, for each container (VP8 IVF, H.264 Annex B, Y4M), paced and unpaced.

import Testing
import ZoneCore
@testable import Media

/// The fixture's format and frames.
func fixtureStream(_ name: String) throws -> (format: VideoStreamFormat, frames: [VideoFrame]) {
    var source = try VideoFileSource(bytes: Fixture.bytes(name), name: name)
    let frames = try source.readAll()
    return (source.format, frames)
}

@Suite("Media session (sender → receiver in memory)")
struct MediaSessionTests {
    @Test func vp8WithoutLossArrivesIdenticalAndPaced() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        #expect(format.codec == .vp8 && frames.count == 60)
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase,
                                          forward: ImpairmentSpec(delay: .milliseconds(5)),
                                          backward: ImpairmentSpec(delay: .milliseconds(5)))
        let elapsed = session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        #expect(FrameChecksum.of(session.received, codec: .vp8).digest == FrameChecksum.of(frames, codec: .vp8).digest)
        let s = session.sender.stats, r = session.receiver.stats
        #expect(s.framesSent == 60 && s.packetsSent == r.packetsReceived && s.retransmissions == 0)
        #expect(r.framesReceived == 60 && r.lost == 0 && r.nacksSent == 0 && r.duplicates == 0 && r.plisSent == 0)
        #expect(r.malformed == 0 && r.byeReceived && s.confirmedComplete)
        #expect(session.senderEvents == [.finished] && session.receiverEvents == [.finished])
        #expect(session.allRTCPParsed)
        // Paced by the file: 60 frames at 30 fps take 59/30 s to send; the end follows quickly.
        #expect(elapsed >= .milliseconds(1966) && elapsed < .milliseconds(2300), "elapsed \(elapsed)")
        // The receiver learned the sender's RTT from SR/RR, and frame latency from the SR mapping.
        #expect(s.rtt.map { $0 >= .milliseconds(9) && $0 <= .milliseconds(11) } == true,
                "rtt \(String(describing: s.rtt))")
        let latencies = session.timings.compactMap(\.latency)
        #expect(latencies.count == 60)
        // The path's 5 ms: knowing the first sequence number, the receiver starts at once.
        #expect(latencies.allSatisfy { $0 >= .microseconds(4950) && $0 < .microseconds(5050) },
                "\(latencies.prefix(5))")
    }

    @Test func realtimePacingSendsEachFrameAtItsPts() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase)
        session.run()
        // The first packet of frame i leaves at start + i/30 s (to the nanosecond the clock jumps).
        var sequence = session.sender.configuration.initialSequenceNumber
        var packetizer = VP8Packetizer()
        for (i, frame) in frames.enumerated() {
            let sent = try #require(session.firstSent[sequence])
            let offset = sent - session.start
            let want = Duration.nanoseconds(Int64(i) * 1_000_000_000 / 30)
            #expect(offset >= want && offset < want + .microseconds(1), "frame \(i) left at \(offset)")
            sequence &+= UInt16(try packetizer.packetize(frame.bytes).count)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func tenPercentLossIsRepairedByNacks(seed: UInt64) throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        let path = ImpairmentSpec(loss: 0.1, delay: .milliseconds(10), jitter: .milliseconds(2), seed: seed)
        var back = path
        back.seed = seed + 100
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase, seed: seed,
                                          forward: path, backward: back, maxPayloadSize: 300)
        session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        let s = session.sender.stats, r = session.receiver.stats
        #expect(session.sender.stats.packetsSent > 150 && session.forwardLost > 10)
        #expect(r.nacksSent > 0 && s.nacksReceived > 0 && s.retransmissions > 0 && r.recovered > 0)
        #expect(r.lost == 0 && r.plisSent == 0 && r.framesReceived == 60)
        #expect(session.allRTCPParsed)
    }

    @Test func reorderingAndDuplicationChangeNothing() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        let path = ImpairmentSpec(delay: .milliseconds(10), jitter: .milliseconds(4), reorder: 0.1,
                                  reorderGap: .milliseconds(6), duplicate: 0.05, seed: 9)
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase, forward: path,
                                          backward: ImpairmentSpec(delay: .milliseconds(10)), maxPayloadSize: 300)
        session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        // Only the forward link reorders and duplicates, so the network's counters are its.
        #expect(session.network.counters.reordered > 5 && session.network.counters.duplicated > 5)
        #expect(session.receiver.stats.duplicates > 0 && session.receiver.stats.lost == 0)
    }

    @Test func h264FixtureArrivesWithItsAccessUnitsAndPts() throws {
        let (format, frames) = try fixtureStream("h264-320x240-60.h264")
        #expect(format.codec == .h264 && frames.count == 60)
        let path = ImpairmentSpec(loss: 0.05, delay: .milliseconds(10), seed: 4)
        var session = MediaSessionHarness(frames: frames, codec: .h264, timebase: format.timebase, forward: path,
                                          backward: ImpairmentSpec(delay: .milliseconds(10)))
        session.run()
        #expect(session.finished)
        // RTP drops start codes: the access units come back with four-byte ones, equal in
        // canonical form, with the same pts.
        #expect(session.received.map(\.pts) == frames.map(\.pts))
        #expect(FrameChecksum.of(session.received, codec: .h264).frameCRCs
                == FrameChecksum.of(frames, codec: .h264).frameCRCs)
        #expect(FrameChecksum.of(session.received, codec: .h264).digest
                == FrameChecksum.of(frames, codec: .h264).digest)
        #expect(session.receiver.stats.recovered > 0)
    }

    @Test func y4mFramesTravelInTheGenericFormat() throws {
        let (format, frames) = try fixtureStream("testsrc-32x24-5.y4m")
        #expect(format.codec == .generic && frames.count == 5)
        var session = MediaSessionHarness(frames: frames, codec: .generic, timebase: format.timebase,
                                          maxPayloadSize: 300)  // 1152-byte frames in 4 packets each
        session.run()
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        #expect(session.sender.stats.packetsSent == 20)
        // And back into a Y4M file identical to the fixture.
        #expect(VideoFileSink.bytes(format: format, frames: session.received)
                == (try Fixture.bytes("testsrc-32x24-5.y4m")))
    }

    @Test func unpacedStreamIsIdenticalAndTakesNoTime() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase, pace: .max)
        let elapsed = session.run()
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        // Only the receiver's startup delay and end-of-stream grace take virtual time.
        #expect(elapsed < .milliseconds(200), "elapsed \(elapsed)")
    }

    @Test func flowControlWindowKeepsTheSenderNearTheReceiversReports() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase, pace: .max,
                                          forward: ImpairmentSpec(delay: .milliseconds(5)),
                                          backward: ImpairmentSpec(delay: .milliseconds(5)), maxPayloadSize: 200) {
            $0.receiverReportPackets = 8
        }
        let configuration = session.sender.configuration
        var windowed = configuration
        windowed.window = 32
        session.sender = MediaSender(configuration: windowed, frames: frames, timebase: format.timebase,
                                     now: session.start)
        // Track how far the sender gets ahead of what the receiver has taken.
        var ahead = 0
        while !session.finished && session.clock.now() - session.start < .seconds(20) {
            session.step()
            ahead = max(ahead, session.sender.stats.packetsSent - session.receiver.stats.packetsReceived)
            guard session.advance() else { break }
        }
        #expect(session.finished && session.receivedEqual(frames), "\(session.difference(from: frames))")
        #expect(session.sender.stats.windowStalls > 5)
        // The window (32) plus the 8 packets a report can lag behind.
        #expect(ahead <= 32 + 8, "ahead \(ahead)")
    }

    @Test func unpacedSenderHoldsOneFrameWhenTheDriverStopsDraining() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var configuration = MediaSender.Configuration(codec: .vp8, ssrc: 1, pace: .max)
        configuration.maxPayloadSize = 200
        let clock = ManualClock()
        var sender = MediaSender(configuration: configuration, frames: frames, timebase: format.timebase,
                                 now: clock.now())
        var packets: [[UInt8]] = []
        // The driver takes three packets at a time, as if its socket blocked after each batch,
        // and time moves on meanwhile: the output is the same as draining at once.
        while !sender.isFinished {
            sender.handle(.timer, now: clock.now())
            for _ in 0..<3 {
                guard let output = sender.pollOutput() else { break }
                if case .rtp(let bytes) = output { packets.append(bytes) }
            }
            #expect(sender.stats.framesSent <= frames.count)
            clock.advance(by: .milliseconds(1))
            if packets.count > 100_000 { break }
        }
        var depacketizer = VP8Depacketizer()
        var rebuilt: [[UInt8]] = []
        var current: [[UInt8]] = []
        var seen = Set<UInt16>()
        for bytes in packets {
            let packet = try RTPPacket(parsing: bytes)
            guard seen.insert(packet.sequenceNumber).inserted else { continue }
            current.append(packet.payload)
            if packet.marker {
                rebuilt.append(try depacketizer.depacketize(current))
                current = []
            }
        }
        #expect(rebuilt == frames.map(\.bytes))
        #expect(sender.stats.framesSent == 60)
    }

    @Test func tailLossIsResentWhenTheReceiverReportShowsIt() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase,
                                          forward: ImpairmentSpec(delay: .milliseconds(5)),
                                          backward: ImpairmentSpec(delay: .milliseconds(5)))
        // Count the packets, then drop the last three the first time they are sent: no later
        // packet reveals the gap, only the receiver's report answering the BYE.
        var counter = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase)
        counter.run()
        let total = counter.sender.stats.packetsSent
        let first = session.sender.configuration.initialSequenceNumber
        let tail = Set((total - 3..<total).map { first &+ UInt16($0) })
        session.dropRTP = { sequence, count in count == 0 && tail.contains(sequence) }
        session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        #expect(session.sender.stats.retransmissions >= 3 && session.receiver.stats.lost == 0)
    }

    @Test func packetsLostForGoodAreReportedWithAPictureLossIndication() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase,
                                          forward: ImpairmentSpec(delay: .milliseconds(5)),
                                          backward: ImpairmentSpec(delay: .milliseconds(5)))
        // Every transmission of the eleventh packet (frame 6: the keyframe takes five) is dropped.
        let victim = session.sender.configuration.initialSequenceNumber &+ 10
        session.dropRTP = { sequence, _ in sequence == victim }
        session.run()
        #expect(session.finished)
        let r = session.receiver.stats, s = session.sender.stats
        #expect(r.lost >= 1 && r.gaps == 1 && r.plisSent == 1 && s.plisReceived == 1)
        #expect(r.framesReceived == 59 && session.received.count == 59)
        #expect(session.senderEvents.contains(.keyframeRequested) && session.senderEvents.last == .finished)
        // Every other frame arrived intact, with its pts.
        let sent = Dictionary(uniqueKeysWithValues: frames.map { ($0.pts, $0.bytes) })
        #expect(session.received.allSatisfy { sent[$0.pts] == $0.bytes })
    }

    @Test func receiverWithoutTheOriginNumbersFramesFromTheFirst() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase) {
            $0.timestampOrigin = nil
            $0.payloadType = nil
            $0.timebase = Timebase(numerator: 1, denominator: 90_000)
        }
        session.run()
        #expect(session.received.map(\.bytes) == frames.map(\.bytes))
        #expect(session.received.map(\.pts) == frames.map { $0.pts * 3000 })
    }
}
