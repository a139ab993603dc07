// Both directions of a call on one path each way, RTP and RTCP multiplexed (RFC 5761), as a
// peer over ICE runs them: each end has a MediaSender and a MediaReceiver; an arriving RTCP
// datagram goes to both (each takes what concerns it: reports on its stream, or the remote
// sender's SR and BYE), an RTP datagram to the receiver. Both files must arrive identical, and
// one side ending its stream first must not end the other's.

import TestNetwork
import Testing
import ZoneCore
@testable import Media

@Suite("Media two-way over one multiplexed path")
struct MediaTwoWayTests {
    struct End {
        var sender: MediaSender
        var receiver: MediaReceiver
        var received: [VideoFrame] = []
        var events: [MediaSender.Event] = []
    }

    @Test func bothDirectionsArriveIdentical() throws {
        let (vp8Format, vp8Frames) = try fixtureStream("vp8-320x240-60.ivf")
        let (h264Format, h264Frames) = try fixtureStream("h264-320x240-60.h264")
        let clock = ManualClock()
        let start = clock.now()
        var random = SeededRandom(seed: 21)
        func end(frames: [VideoFrame], format: VideoStreamFormat,
                 random: inout SeededRandom) -> (End, MediaSender.Configuration) {
            var configuration = MediaSender.Configuration.random(codec: format.codec, using: &random)
            configuration.payloadType = format.codec == .vp8 ? 96 : 97
            let sender = MediaSender(configuration: configuration, frames: frames, timebase: format.timebase,
                                     now: start)
            // Replaced below, once the other side's configuration (what its signaling says) is known.
            let receiver = MediaReceiver(configuration: .init(codec: .vp8, ssrc: configuration.ssrc), now: start)
            return (End(sender: sender, receiver: receiver), configuration)
        }
        var (a, aConfig) = end(frames: vp8Frames, format: vp8Format, random: &random)
        var (b, bConfig) = end(frames: h264Frames, format: h264Format, random: &random)
        // A receives B's H.264, B receives A's VP8.
        a.receiver = MediaReceiver(configuration: .init(
            codec: .h264, ssrc: aConfig.ssrc, payloadType: bConfig.payloadType, remoteSSRC: bConfig.ssrc,
            timebase: h264Format.timebase, timestampOrigin: bConfig.timestampOrigin,
            firstSequenceNumber: bConfig.initialSequenceNumber), now: start)
        b.receiver = MediaReceiver(configuration: .init(
            codec: .vp8, ssrc: bConfig.ssrc, payloadType: aConfig.payloadType, remoteSSRC: aConfig.ssrc,
            timebase: vp8Format.timebase, timestampOrigin: aConfig.timestampOrigin,
            firstSequenceNumber: aConfig.initialSequenceNumber), now: start)
        // One path each way of 8 ms that loses 5 %: each datagram crosses A's link and B's.
        let network = TestNetwork(start: start, seed: 1, link: TestNetwork.link(path: .milliseconds(8), loss: 0.05))
        let aAddress = Endpoint(address: .v4(0x0A00_0001), port: 5000)
        let bAddress = Endpoint(address: .v4(0x0A00_0002), port: 5000)

        func drain(_ end: inout End, from: Endpoint, to: Endpoint, now: Instant) {
            end.sender.handle(.timer, now: now)
            end.receiver.handle(.timer, now: now)
            while let output = end.sender.pollOutput() {
                switch output {
                case .rtp(let bytes), .rtcp(let bytes): network.send(bytes, from: from, to: to)
                case .event(let event): end.events.append(event)
                }
            }
            while let output = end.receiver.pollOutput() {
                switch output {
                case .rtcp(let bytes): network.send(bytes, from: from, to: to)
                case .frame(let frame): end.received.append(frame)
                case .event: break
                }
            }
        }
        func deliver(_ bytes: [UInt8], to end: inout End, now: Instant) {
            if bytes.count >= 2, (192...223).contains(bytes[1]) {
                end.sender.handle(.rtcp(bytes), now: now)
                end.receiver.handle(.rtcp(bytes), now: now)
            } else {
                end.receiver.handle(.rtp(bytes), now: now)
            }
        }
        var done = false
        while !done && clock.now() - start < .seconds(30) {
            let now = clock.now()
            for _ in 0..<3 {
                drain(&a, from: aAddress, to: bAddress, now: now)
                drain(&b, from: bAddress, to: aAddress, now: now)
                network.advance(to: now)
                while let arrival = network.arrival(notAfter: now) {
                    if arrival.to == bAddress {
                        deliver(arrival.payload, to: &b, now: now)
                    } else {
                        deliver(arrival.payload, to: &a, now: now)
                    }
                }
            }
            done = a.sender.isFinished && a.receiver.isFinished && b.sender.isFinished && b.receiver.isFinished
            let next = [a.sender.nextDeadline, a.receiver.nextDeadline, b.sender.nextDeadline,
                        b.receiver.nextDeadline, network.nextArrival].compactMap { $0 }.min()
            guard let next else { break }
            clock.set(to: max(next, now + .microseconds(1)))
        }
        #expect(done)
        #expect(b.received == vp8Frames, "B got \(b.received.count) of \(vp8Frames.count)")
        #expect(FrameChecksum.of(a.received, codec: .h264).digest
                == FrameChecksum.of(h264Frames, codec: .h264).digest)
        #expect(a.receiver.stats.recovered > 0 && b.receiver.stats.recovered > 0)
        #expect(a.receiver.stats.lost == 0 && b.receiver.stats.lost == 0)
        // Each sender heard its own receiver's reports, and only those.
        #expect(a.sender.stats.receiverReports > 0 && b.sender.stats.receiverReports > 0)
        #expect(a.events.last == .finished && b.events.last == .finished)
    }
}
