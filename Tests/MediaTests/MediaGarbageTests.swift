// Hostile input at the media machines: datagrams that are not RTP or RTCP, truncated packets,
// the wrong payload type or SSRC, RTCP that does not parse. Each is counted and dropped; the
// stream around it still arrives intact. Also SDES and BYE, which the machines now speak.

import Testing
import ZoneCore
@testable import Media

@Suite("Media machines and garbage")
struct MediaGarbageTests {
    @Test func receiverCountsAndDropsGarbage() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase,
                                          forward: ImpairmentSpec(delay: .milliseconds(3)))
        var random = SeededRandom(seed: 77)
        let ssrc = session.sender.configuration.ssrc
        let valid = RTPPacket(payloadType: 96, sequenceNumber: 9, timestamp: 0, ssrc: ssrc, payload: [0x90, 0, 1])
        var garbage: [[UInt8]] = [
            [], [0x80], Array("GET / HTTP/1.1\r\n".utf8),
            Array(valid.serialized().prefix(10)),                                  // truncated header
            RTPPacket(payloadType: 97, sequenceNumber: 1, timestamp: 0, ssrc: ssrc).serialized(),   // wrong PT
            RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: ssrc &+ 1).serialized(), // wrong SSRC
            [0x80 | 0x20, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 200],                 // padding longer than the packet
            [0x81, 201, 0, 7, 0, 0, 0, 1],                                         // RTCP claiming 32 bytes
        ]
        for _ in 0..<200 {
            garbage.append((0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        var injected = false
        while !session.finished && session.clock.now() - session.start < .seconds(10) {
            session.step()
            // Once the stream is under way, throw the garbage at both of the receiver's ports.
            if !injected && session.received.count >= 10 {
                injected = true
                for bytes in garbage {
                    session.receiver.handle(.rtp(bytes), now: session.clock.now())
                    session.receiver.handle(.rtcp(bytes), now: session.clock.now())
                    session.sender.handle(.rtcp(bytes), now: session.clock.now())
                }
            }
            guard session.advance() else { break }
        }
        #expect(injected && session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        let r = session.receiver.stats
        #expect(r.malformed > 100 && r.wrongPayloadType >= 1 && r.wrongSSRC >= 1)
        #expect(session.sender.stats.malformedRTCP > 100)
        #expect(r.lost == 0 && r.framesReceived == 60)
    }

    @Test func strayRTPBeforeTheStreamDoesNotCaptureTheReceiver() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        // Nothing signaled: the receiver learns SSRC and payload type from the traffic.
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase) {
            $0.payloadType = nil
            $0.firstSequenceNumber = nil
            $0.remoteSSRC = nil
        }
        var random = SeededRandom(seed: 3)
        for i in 0..<50 {
            let stray = RTPPacket(payloadType: 96, sequenceNumber: UInt16(i * 7), timestamp: 0,
                                  ssrc: UInt32(truncatingIfNeeded: random.next()), payload: [0x90, 0, 0])
            session.receiver.handle(.rtp(stray.serialized()), now: session.clock.now())
        }
        session.run()
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        #expect(session.receiver.remoteSSRC == session.sender.configuration.ssrc)
        #expect(session.receiver.stats.wrongSSRC >= 49)
    }

    @Test func goodbyeAndSourceDescriptionRoundTrip() throws {
        let packets: [RTCPPacket] = [
            .receiverReport(RTCPReceiverReport(ssrc: 7)),
            .sourceDescription(RTCPSourceDescription(chunks: [
                .init(ssrc: 7, cname: "zonertc"), .init(ssrc: 8, cname: "abc"), .init(ssrc: 9, cname: nil),
            ])),
            .goodbye(RTCPGoodbye(sources: [7, 8], reason: "end of stream")),
            .goodbye(RTCPGoodbye(sources: [])),
        ]
        let bytes = RTCPPacket.serializeCompound(packets)
        #expect(bytes.count % 4 == 0)
        #expect(try RTCPPacket.parseCompound(bytes) == packets)
        // RFC 3550 §6.5: "zonertc" is item type 1, length 7, then a zero byte: 4+2+7+1 = 14 → 16.
        let sdes = RTCPPacket.sourceDescription(RTCPSourceDescription(ssrc: 1, cname: "zonertc")).serialized()
        #expect(sdes == [0x81, 202, 0, 4, 0, 0, 0, 1, 1, 7] + Array("zonertc".utf8) + [0, 0, 0])
        // A BYE whose reason runs past the packet is refused, not read beyond it.
        #expect(throws: MediaError.self) { try RTCPPacket.parseCompound([0x81, 203, 0, 2, 0, 0, 0, 1, 9, 65, 65, 65]) }
    }

    @Test func ntpTimestampsRoundTrip() {
        let instant = Instant(nanosecondsSinceEpoch: 1_700_000_000_123_456_789)
        let ntp = NTPTimestamp.from(instant)
        #expect(ntp >> 32 == 1_700_000_000 + 2_208_988_800)
        let back = NTPTimestamp.instant(ntp)
        #expect(abs((back - instant).nanoseconds) <= 1)
        // A report sent 25 ms after the SR it echoes, received 40 ms after that SR: RTT 15 ms.
        let lsr = NTPTimestamp.compact(instant)
        let rtt = NTPTimestamp.roundTripTime(now: instant + .milliseconds(40), lastSenderReport: lsr,
                                             delaySinceLastSenderReport: NTPTimestamp.compactUnits(.milliseconds(25)))
        #expect(rtt.map { abs(($0 - .milliseconds(15)).nanoseconds) < 50_000 } == true)
        #expect(NTPTimestamp.roundTripTime(now: instant, lastSenderReport: 0, delaySinceLastSenderReport: 0) == nil)
    }
}
