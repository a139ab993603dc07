// The media of a call with a browser-dialect remote, on a manual clock: aiortc's real
// descriptions (Fixtures/sdp/) in, a MediaSender standing in for the browser's stream. A
// browser names no stream format, so its frames are recorded at the RTP clock with the
// timestamps rebased to the first frame; its retransmissions come on its RTX stream; ours go on
// the RTX SSRC our description announced.
import Foundation
import Media
import SDP
import Signaling
import Testing
import ZoneCore

@testable import Peer

@Suite struct BrowserMediaTests {
    static let sdp = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/sdp")
    static let fixtures = sdp.deletingLastPathComponent()

    static func description(_ name: String, _ type: SDPType) throws -> SessionDescription {
        try SessionDescription(parsing: try String(contentsOf: sdp.appendingPathComponent(name), encoding: .utf8),
                               type: type)
    }

    static func vp8Fixture() throws -> (VideoStreamFormat, [VideoFrame]) {
        let name = "vp8-320x240-60.ivf"
        var source = try VideoFileSource(bytes: Array(try Data(contentsOf: fixtures.appendingPathComponent(name))),
                                         name: name)
        return (source.format, try source.readAll())
    }

    /// aiortc's sendrecv offer names VP8 at 97 from SSRC 1628523837 and RTX at 98 from 318845959.
    @Test func browserStreamIsRecordedRebasedToItsFirstFrameAndRepairedByRTX() throws {
        let offer = try Self.description("aiortc-offer-video-sendrecv.sdp", .offer)
        let remote = try RemoteVideoDescription(offer)
        let (ssrc, rtxSSRC) = (try #require(remote.ssrc), try #require(remote.retransmissionSSRC))
        #expect(remote.codecs.first?.payloadType == 97 && remote.retransmissionPayloadType(for: 97) == 98)

        let clock = ManualClock()
        let now = clock.now()
        var media = CallMedia(configuration: CallMediaConfiguration(receive: true), seed: 3)
        media.handle(.remoteDescription(offer), now: now)
        let format = try #require(media.remoteFormat)
        #expect(format.codec == .vp8 && format.timebase == Timebase(numerator: 1, denominator: 90_000))

        // The browser: a random timestamp origin just before the 32-bit wrap, RTX on.
        let (fileFormat, frames) = try Self.vp8Fixture()
        var sc = MediaSender.Configuration(codec: .vp8, ssrc: ssrc, payloadType: 97, pace: .realtime,
                                           maxPayloadSize: 400, initialSequenceNumber: 40_000,
                                           timestampOrigin: 0xFFFF_0000)
        sc.retransmission = RetransmissionStream(ssrc: rtxSSRC, payloadType: 98)
        sc.retransmissionInitialSequenceNumber = 7
        var browser = MediaSender(configuration: sc, frames: frames, timebase: fileFormat.timebase, now: now)
        media.handle(.connected, now: now)

        // Packets 5 and 30 of the browser's stream are lost the first time.
        var dropped = Set<UInt16>([40_005, 40_030])
        var rtxSeen = 0
        let received = try Self.stream(&browser, into: &media, clock: clock, drop: { packet in
            if packet.ssrc == rtxSSRC { rtxSeen += 1 }
            return packet.ssrc == ssrc && dropped.remove(packet.sequenceNumber) != nil
        }, until: { $0.count == frames.count })
        #expect(dropped.isEmpty && rtxSeen == 2)
        let identical = received.map(\.bytes) == frames.map(\.bytes)
        #expect(identical)
        // 1/30 s frames at 90 kHz, from 0 at the first frame, across the timestamp wrap.
        #expect(received.map(\.pts) == frames.map { $0.pts * 3000 })
        #expect(media.stats.recovered == 2 && media.stats.lost == 0)
    }

    /// Runs `browser`'s stream into `media` on `clock`, RTCP both ways, until the browser has finished and
    /// `done` holds for what was recorded, or nothing is due; `drop` says which RTP packets the wire loses.
    static func stream(_ browser: inout MediaSender, into media: inout CallMedia, clock: ManualClock,
                       drop: (RTPPacket) -> Bool = { _ in false }, until done: ([VideoFrame]) -> Bool) throws
        -> [VideoFrame] {
        var now = clock.now()
        var received: [VideoFrame] = []
        for _ in 0..<200_000 {
            var moved = true
            while moved {
                moved = false
                while let output = browser.pollOutput() {
                    moved = true
                    guard case .rtp(let bytes) = output else {
                        if case .rtcp(let bytes) = output { media.handle(.packet(bytes), now: now) }
                        continue
                    }
                    if drop(try RTPPacket(parsing: bytes)) { continue }
                    media.handle(.packet(bytes), now: now)
                }
                while let output = media.pollOutput() {
                    moved = true
                    switch output {
                    case .packet(let bytes): browser.handle(.rtcp(bytes), now: now)
                    case .frame(let frame): received.append(frame)
                    case .finished: break
                    }
                }
            }
            if browser.isFinished && done(received) { break }
            guard let next = [browser.nextDeadline, media.nextDeadline].compactMap({ $0 }).min() else { break }
            if next > now {
                clock.set(to: next)
                now = next
            }
            browser.handle(.timer, now: now)
            media.handle(.timer, now: now)
        }
        return received
    }

    /// A browser's stream joined midway — it names no first sequence number, and its first frames are inter
    /// frames (the fixture's 1…29): nothing is recorded before its keyframe (frame 30), the 29 frames are
    /// counted as skipped, and PLIs ask the browser for a keyframe meanwhile.
    @Test func browserStreamJoinedMidwayIsRecordedFromItsKeyframe() throws {
        let offer = try Self.description("aiortc-offer-video-sendrecv.sdp", .offer)
        let ssrc = try #require(try RemoteVideoDescription(offer).ssrc)
        let clock = ManualClock()
        var media = CallMedia(configuration: CallMediaConfiguration(receive: true), seed: 4)
        media.handle(.remoteDescription(offer), now: clock.now())
        let (fileFormat, frames) = try Self.vp8Fixture()
        let sc = MediaSender.Configuration(codec: .vp8, ssrc: ssrc, payloadType: 97, pace: .realtime,
                                           initialSequenceNumber: 9, timestampOrigin: 0x1000)
        var browser = MediaSender(configuration: sc, frames: Array(frames.dropFirst()), timebase: fileFormat.timebase,
                                  now: clock.now())
        media.handle(.connected, now: clock.now())
        let received = try Self.stream(&browser, into: &media, clock: clock, until: { $0.count == 30 })
        let identical = received.map(\.bytes) == frames[30...].map(\.bytes)
        #expect(identical, "recorded \(received.count) frames")
        // At the RTP clock, from 0 at the first frame recorded.
        #expect(received.map(\.pts) == frames[30...].map { ($0.pts - 30) * 3000 })
        #expect(media.stats.framesBeforeKeyframe == 29 && media.stats.framesReceived == 30)
        #expect(media.stats.plisSent == 2 && browser.stats.plisReceived == 2, "\(media.stats)")
        #expect(media.stats.summaryText?.contains("30 frames (29 before the first keyframe skipped)") == true)
    }

    /// Our offer announced SSRC 3142153527 with RTX 1045066866; aiortc's answer took VP8 at 96
    /// with RTX at 98.
    @Test func weSendFromTheAnnouncedSSRCsAndRetransmitOnRTX() throws {
        let (format, frames) = try Self.vp8Fixture()
        let clock = ManualClock()
        let now = clock.now()
        let outgoing = CallMediaConfiguration.Outgoing(format: format, frames: Array(frames.prefix(2)))
        var media = CallMedia(configuration: CallMediaConfiguration(send: outgoing, pace: .max), seed: 5)
        media.handle(.localDescription(try Self.description("zonertc-offer-sendonly-vp8.sdp", .offer)), now: now)
        media.handle(.remoteDescription(try Self.description("aiortc-answer-to-zonertc-vp8.sdp", .answer)),
                     now: now)
        media.handle(.connected, now: now)
        var rtp: [RTPPacket] = []
        while let output = media.pollOutput() {
            if case .packet(let bytes) = output, bytes.count > 1, !(192...223).contains(bytes[1]) {
                rtp.append(try RTPPacket(parsing: bytes))
            }
        }
        #expect(!rtp.isEmpty && rtp.allSatisfy { $0.ssrc == 3_142_153_527 && $0.payloadType == 96 })
        let nack = RTCPGenericNack(senderSSRC: 3_380_947_036, mediaSSRC: 3_142_153_527, lost: [rtp[1].sequenceNumber])
        media.handle(.packet(RTCPPacket.serializeCompound([.nack(nack)])), now: now)
        media.handle(.timer, now: now)
        var resent: [RTPPacket] = []
        while let output = media.pollOutput() {
            if case .packet(let bytes) = output, bytes.count > 1, !(192...223).contains(bytes[1]) {
                resent.append(try RTPPacket(parsing: bytes))
            }
        }
        #expect(resent.count == 1)
        #expect(resent.first?.ssrc == 1_045_066_866 && resent.first?.payloadType == 98)
        #expect(resent.first.map { Array($0.payload.dropFirst(2)) } == rtp[1].payload)
    }
}

/// Counts what the wire sees of the stream in the browsers' dialect.
private final class StreamTap {
    var originals = 0
    var retransmissions = 0
}

@Suite struct BrowserDialectCallTests {
    /// Two zonertc peers speaking the browsers' dialect (RTX, ssrc lines; plain RTP, no DTLS
    /// here): frames stay exact, since our `a=x-zonertc-format` still travels, and the two
    /// originals the wire loses come back on the RTX stream our offer announced.
    @Test(arguments: ["vp8-320x240-60.ivf", "h264-320x240-60.h264"])
    func framesStayExactAndLossIsRepairedOverRTX(file: String) async throws {
        let path = BrowserMediaTests.fixtures.appendingPathComponent(file).path
        let (format, frames) = try VideoFileSource.read(path: path)
        let send = CallMediaConfiguration(send: .init(format: format, frames: frames), pace: .max)
        let h = try await MemoryCallHarness(
            strategy: .push, media: (send, CallMediaConfiguration(receive: true)), dialect: .webRTC)
        // Our offer lists VP8 96, H.264 97 and their RTX formats 98 and 99.
        let tap = StreamTap()
        h.dropDatagram = { bytes in
            guard bytes.count >= 12, bytes[0] >> 6 == 2, !(192...223).contains(bytes[1]) else { return false }
            switch bytes[1] & 0x7F {
            case 96, 97:
                tap.originals += 1
                return tap.originals == 10 || tap.originals == 30
            case 98, 99:
                tap.retransmissions += 1
                return false
            default:
                return false
            }
        }
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let done = await h.run(for: .seconds(60)) { h.a.finished && h.b.finished }
        #expect(done)
        #expect(h.b.frames.map(\.pts) == frames.map(\.pts))
        // The frame digest compares H.264 access units NAL unit by NAL unit (our depacketizer
        // writes four-byte start codes); VP8 frames are compared byte for byte as well.
        if format.codec == .vp8 {
            let identical = h.b.frames.map(\.bytes) == frames.map(\.bytes)
            #expect(identical)
        }
        let a = h.a.call.media.stats, b = h.b.call.media.stats
        #expect(tap.retransmissions == 2 && a.retransmissions == 2 && b.recovered == 2 && b.lost == 0)
        #expect(a.sentDigest == b.receivedDigest)
    }
}
