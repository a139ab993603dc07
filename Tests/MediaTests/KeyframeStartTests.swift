// A receiver that joins a stream midway (it does not know the sender's first sequence number: a
// browser, aiortc, `media receive` without --sdp) records nothing before the first keyframe (RFC
// 7741 §4.3 for VP8, an IDR for H.264, RFC 6184), counts what it skipped and asks for a keyframe
// with PLIs (RFC 4585 §6.3.1) at most one per `pictureLossInterval`; one that knows the first
// sequence number repairs a lost start with NACKs instead. The fixtures hold keyframes at frames
// 0 and 30. A manual clock; frames arrive every 33 ms.

import Testing
import ZoneCore
@testable import Media

/// Feeds a MediaReceiver one frame's packets at a time and collects what it hands out.
private struct ReceiverFeed {
    let clock = ManualClock()
    let start: Instant
    var receiver: MediaReceiver
    var written: [VideoFrame] = []
    /// When each PLI left, from the start.
    var pictureLossTimes: [Duration] = []
    var nacked: [UInt16] = []
    var finished = false
    var goodbyeSent = false

    init(_ configuration: MediaReceiver.Configuration) {
        start = clock.now()
        receiver = MediaReceiver(configuration: configuration, now: start)
    }

    mutating func drain() {
        while let output = receiver.pollOutput() {
            switch output {
            case .frame(let frame):
                written.append(frame)
            case .rtcp(let bytes):
                for packet in (try? RTCPPacket.parseCompound(bytes)) ?? [] {
                    switch packet {
                    case .pictureLossIndication: pictureLossTimes.append(clock.now() - start)
                    case .nack(let nack): nacked += nack.lostSequenceNumbers
                    case .goodbye: goodbyeSent = true
                    default: break
                    }
                }
            case .event(.finished):
                finished = true
            }
        }
    }

    /// Feeds the receiver's timers up to `instant`, then moves the clock there.
    mutating func run(until instant: Instant) {
        var rounds = 0
        while let due = receiver.nextDeadline, due <= instant, rounds < 10_000 {
            rounds += 1
            if due > clock.now() { clock.set(to: due) }
            receiver.handle(.timer, now: clock.now())
            drain()
        }
        if instant > clock.now() { clock.set(to: instant) }
    }

    mutating func receive(_ packets: [RTPPacket]) {
        for packet in packets { receiver.handle(.rtp(packet.serialized()), now: clock.now()) }
        drain()
    }
}

@Suite("A receiver that joins midway starts at a keyframe")
struct KeyframeStartTests {
    static let ssrc: UInt32 = 0x1234_5678
    static let frameInterval = Duration.milliseconds(33)

    /// The packets of the fixture's frames at `indices` as a sender sends them (a sender that answers a
    /// PLI with a keyframe skips ahead), frame by frame, from sequence number 5000, RTP clock from 777.
    static func packets(_ name: String, frames indices: [Int]) throws
        -> (VideoStreamFormat, [VideoFrame], [[RTPPacket]]) {
        let (format, frames) = try fixtureStream(name)
        var packetizer = format.codec.packetizer(maxPayloadSize: 1200)
        var sequencer = RTPSequencer(ssrc: ssrc, payloadType: 96, initialSequenceNumber: 5000, timestampOffset: 777)
        let packets = try indices.map { frames[$0] }.map { frame in
            sequencer.packets(for: try packetizer.packetize(frame.bytes),
                              mediaTimestamp: format.timebase.convert(frame.pts, toClockRate: VideoCodec.clockRate))
        }
        return (format, frames, packets)
    }

    static func configuration(_ format: VideoStreamFormat) -> MediaReceiver.Configuration {
        var c = MediaReceiver.Configuration(codec: format.codec, ssrc: 0xABCD)
        c.payloadType = 96
        c.remoteSSRC = ssrc
        c.timebase = format.timebase
        c.timestampOrigin = 777
        return c
    }

    /// Feeds each frame's packets, one frame every 33 ms, then lets the receiver time out.
    private static func feed(_ feed: inout ReceiverFeed, _ packets: some Sequence<[RTPPacket]>) {
        for (n, frame) in packets.enumerated() {
            feed.run(until: feed.start + frameInterval * n)
            feed.receive(frame)
        }
        feed.run(until: feed.clock.now() + .seconds(1))
    }

    @Test("inter frames first: nothing written, PLIs at the interval; the keyframe starts the recording",
          arguments: ["vp8-320x240-60.ivf", "h264-320x240-60.h264"])
    func joinedMidwayStartsAtTheKeyframe(file: String) throws {
        let (format, frames, packets) = try Self.packets(file, frames: Array(1..<60))
        #expect(format.codec.depacketizer().isKeyframe(frames[30].bytes))
        #expect(!format.codec.depacketizer().isKeyframe(frames[1].bytes))
        var feed = ReceiverFeed(Self.configuration(format))
        Self.feed(&feed, packets)  // joined at frame 1: frames 1…29 cannot be decoded
        #expect(feed.written.map(\.pts) == frames[30...].map(\.pts))
        if format.codec == .vp8 {
            let identical = feed.written.map(\.bytes) == frames[30...].map(\.bytes)
            #expect(identical)
        }
        let stats = feed.receiver.stats
        #expect(stats.framesBeforeKeyframe == 29 && stats.framesReceived == 30)
        // Frames 1…29 come over 924 ms: a PLI at the first, the next 500 ms later, none after the keyframe.
        let keyframeArrival = Self.frameInterval * 29
        #expect(feed.pictureLossTimes.count == 2, "\(feed.pictureLossTimes)")
        #expect(stats.plisSent == 2)
        #expect(feed.pictureLossTimes.first.map { $0 < Self.frameInterval } == true, "\(feed.pictureLossTimes)")
        for (earlier, later) in zip(feed.pictureLossTimes, feed.pictureLossTimes.dropFirst()) {
            #expect(later - earlier >= .milliseconds(500) && later - earlier < .milliseconds(500) + Self.frameInterval)
        }
        #expect(feed.pictureLossTimes.allSatisfy { $0 < keyframeArrival })
    }

    @Test("no packets at all: a PLI every pictureLossInterval on the receiver's own deadline, from its start")
    func silentSenderIsAskedAtTheInterval() throws {
        let (format, _, _) = try Self.packets("vp8-320x240-60.ivf", frames: [])
        var feed = ReceiverFeed(Self.configuration(format))
        #expect(feed.receiver.nextDeadline == feed.start + .milliseconds(500))
        feed.run(until: feed.start + .milliseconds(1500))
        #expect(feed.pictureLossTimes == [.milliseconds(500), .milliseconds(1000), .milliseconds(1500)])
        feed.run(until: feed.start + .milliseconds(1999))
        #expect(feed.receiver.stats.plisSent == 3)
        #expect(feed.receiver.nextDeadline == feed.start + .milliseconds(2000))
    }

    @Test("inter frames, then nothing: PLIs go on at the interval until the keyframe, then stop")
    func interFramesThenSilenceKeepAsking() throws {
        let (format, frames, packets) = try Self.packets("vp8-320x240-60.ivf", frames: Array(1...5) + Array(30...35))
        var feed = ReceiverFeed(Self.configuration(format))
        Self.feed(&feed, packets[..<5])  // frames 1…5 over 132 ms, then 1 s without packets
        feed.run(until: feed.start + .milliseconds(1600))
        // The first skipped frame asks at once (once the stream's start waited its startup delay);
        // the timer asks 500 ms after each PLI.
        let first = try #require(feed.pictureLossTimes.first)
        #expect(first < Self.frameInterval)
        #expect(feed.pictureLossTimes == [0, 1, 2, 3].map { first + .milliseconds(500) * $0 })
        for frame in packets[5...] { feed.receive(frame) }  // the keyframe and what follows it
        feed.run(until: feed.clock.now() + .seconds(3))
        #expect(feed.written.map(\.pts) == frames[30...35].map(\.pts))
        #expect(feed.receiver.stats.plisSent == 4 && feed.pictureLossTimes.count == 4)
    }

    @Test("the sender's SSRC not known: no PLI can name it until its stream is taken on, then the interval runs")
    func unknownSenderIsAskedOnceTakenOn() throws {
        let (format, _, packets) = try Self.packets("vp8-320x240-60.ivf", frames: Array(1...3))
        var configuration = Self.configuration(format)
        configuration.remoteSSRC = nil
        var feed = ReceiverFeed(configuration)
        #expect(feed.receiver.nextDeadline == nil)
        feed.run(until: feed.start + .seconds(2))
        feed.receive(packets.flatMap { $0 })  // two packets in sequence take the stream on
        feed.run(until: feed.start + .milliseconds(3100))
        let first = try #require(feed.pictureLossTimes.first)
        #expect(first >= .seconds(2) && first < .seconds(2) + Self.frameInterval)
        #expect(feed.pictureLossTimes == [0, 1, 2].map { first + .milliseconds(500) * $0 })
    }

    @Test("a PLI is answered: the keyframe that comes next starts the recording, and PLIs stop")
    func keyframeOnRequestStartsTheRecording() throws {
        // Inter frames 10…14, then the sender answers the PLI with its keyframe (frame 30) and goes on.
        let (format, frames, packets) = try Self.packets("vp8-320x240-60.ivf",
                                                         frames: Array(10...14) + Array(30...40))
        var feed = ReceiverFeed(Self.configuration(format))
        Self.feed(&feed, packets)
        #expect(feed.written.map(\.pts) == frames[30...40].map(\.pts))
        #expect(feed.receiver.stats.framesBeforeKeyframe == 5)
        #expect(feed.pictureLossTimes.count == 1 && feed.receiver.stats.plisSent == 1)
    }

    @Test("the first sequence number known: inter frames are recorded from the start, as signaled")
    func knownFirstSequenceNumberRecordsFromTheStart() throws {
        let (format, frames, packets) = try Self.packets("vp8-320x240-60.ivf", frames: Array(1..<60))
        var configuration = Self.configuration(format)
        configuration.firstSequenceNumber = 5000
        var feed = ReceiverFeed(configuration)
        Self.feed(&feed, packets)
        #expect(feed.written.map(\.pts) == frames[1...].map(\.pts))
        #expect(feed.receiver.stats.framesBeforeKeyframe == 0 && feed.receiver.stats.plisSent == 0)
    }

    @Test("the first sequence number known and the first packets lost: NACKed, repaired, recorded from frame 0")
    func knownFirstSequenceNumberRepairsALostStart() throws {
        let (format, frames, packets) = try Self.packets("vp8-320x240-60.ivf", frames: Array(0..<60))
        #expect(packets[0].count >= 2)
        var configuration = Self.configuration(format)
        configuration.firstSequenceNumber = 5000
        var feed = ReceiverFeed(configuration)
        var first = packets
        let lost = first[0].removeFirst()  // the keyframe's first packet is lost…
        feed.receive(first[0])
        feed.run(until: feed.start + .milliseconds(20))
        #expect(feed.nacked.contains(5000), "\(feed.nacked)")
        feed.receive([lost])  // …and retransmitted on the NACK
        Self.feed(&feed, first.dropFirst())
        #expect(feed.written.map(\.pts) == frames.map(\.pts))
        #expect(feed.receiver.stats.recovered == 1 && feed.receiver.stats.framesBeforeKeyframe == 0)
        #expect(feed.receiver.stats.plisSent == 0)
    }

    @Test("frameLimit: the stream ends after that many frames, with a BYE, without the sender's")
    func frameLimitEndsTheStream() throws {
        let (format, frames, packets) = try Self.packets("vp8-320x240-60.ivf", frames: Array(0..<60))
        var configuration = Self.configuration(format)
        configuration.frameLimit = 12
        var feed = ReceiverFeed(configuration)
        Self.feed(&feed, packets)
        #expect(feed.written.map(\.pts) == frames[..<12].map(\.pts))
        #expect(feed.finished && feed.goodbyeSent && feed.receiver.isFinished)
        #expect(!feed.receiver.stats.byeReceived)
    }
}
