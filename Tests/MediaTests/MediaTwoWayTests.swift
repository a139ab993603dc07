// Both directions of a call on one path each way, RTP and RTCP multiplexed (RFC 5761), as a
// peer over ICE runs them: each end has a MediaSender and a MediaReceiver; an arriving RTCP
// datagram goes to both (each takes what concerns it: reports on its stream, or the remote
// sender's SR and BYE), an RTP datagram to the receiver. Both files must arrive identical, and
// one side ending its stream first must not end the other's.

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
        var toB = Impairment<[UInt8]>(spec: ImpairmentSpec(loss: 0.05, delay: .milliseconds(8), seed: 1))
        var toA = Impairment<[UInt8]>(spec: ImpairmentSpec(loss: 0.05, delay: .milliseconds(8), seed: 2))

        func drain(_ end: inout End, into path: inout Impairment<[UInt8]>, now: Instant) {
            end.sender.handle(.timer, now: now)
            end.receiver.handle(.timer, now: now)
            while let output = end.sender.pollOutput() {
                switch output {
                case .rtp(let bytes), .rtcp(let bytes): path.submit(bytes, now: now)
                case .event(let event): end.events.append(event)
                }
            }
            while let output = end.receiver.pollOutput() {
                switch output {
                case .rtcp(let bytes): path.submit(bytes, now: now)
                case .frame(let frame): end.received.append(frame)
                case .event: break
                }
            }
        }
        func deliver(_ path: inout Impairment<[UInt8]>, to end: inout End, now: Instant) {
            while let bytes = path.poll(now: now) {
                if bytes.count >= 2, (192...223).contains(bytes[1]) {
                    end.sender.handle(.rtcp(bytes), now: now)
                    end.receiver.handle(.rtcp(bytes), now: now)
                } else {
                    end.receiver.handle(.rtp(bytes), now: now)
                }
            }
        }
        var done = false
        while !done && clock.now() - start < .seconds(30) {
            let now = clock.now()
            for _ in 0..<3 {
                drain(&a, into: &toB, now: now)
                drain(&b, into: &toA, now: now)
                deliver(&toB, to: &b, now: now)
                deliver(&toA, to: &a, now: now)
            }
            done = a.sender.isFinished && a.receiver.isFinished && b.sender.isFinished && b.receiver.isFinished
            let next = [a.sender.nextDeadline, a.receiver.nextDeadline, b.sender.nextDeadline,
                        b.receiver.nextDeadline, toA.nextDeadline, toB.nextDeadline].compactMap { $0 }.min()
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
