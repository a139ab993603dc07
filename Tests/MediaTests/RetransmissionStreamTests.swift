// RTX, RFC 4588 §4: a NACKed packet goes out on the RTX SSRC and payload type with its own
// sequence number and the original sequence number (OSN) first in the payload; the receiver
// turns it back into the original and recovers the frame. All on the manual clock.

import Testing
import ZoneCore
@testable import Media

@Suite("RTX (RFC 4588)")
struct RetransmissionStreamTests {
    static let rtxSSRC: UInt32 = 0x5254_5853
    static let rtxType: UInt8 = 97

    @Test func packetWrapsAndUnwrapsWithTheOSNFirst() throws {
        let original = RTPPacket(payloadType: 96, sequenceNumber: 0xBEEF, timestamp: 123_456, ssrc: 1, marker: true,
                                 csrcs: [7], payload: [1, 2, 3])
        let rtx = original.retransmission(ssrc: Self.rtxSSRC, payloadType: Self.rtxType, sequenceNumber: 9)
        #expect(rtx.ssrc == Self.rtxSSRC && rtx.payloadType == Self.rtxType && rtx.sequenceNumber == 9)
        #expect(rtx.timestamp == 123_456 && rtx.marker && rtx.csrcs == [7])
        #expect(rtx.payload == [0xBE, 0xEF, 1, 2, 3])
        let parsed = try RTPPacket(parsing: rtx.serialized())
        #expect(try parsed.originalFromRetransmission(ssrc: 1, payloadType: 96) == original)
        let short = RTPPacket(payloadType: Self.rtxType, sequenceNumber: 1, timestamp: 0, ssrc: 2, payload: [0xBE])
        #expect(throws: MediaError.self) { try short.originalFromRetransmission(ssrc: 1, payloadType: 96) }
        let padding = RTPPacket(payloadType: Self.rtxType, sequenceNumber: 1, timestamp: 0, ssrc: 2, paddingLength: 224)
        #expect(try RTPPacket(parsing: padding.serialized()).isRetransmissionPadding)
    }

    /// A sender with RTX, and the packets of its first frames.
    private func senderWithRTX() throws -> (MediaSender, [RTPPacket], Instant) {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var configuration = MediaSender.Configuration(codec: .vp8, ssrc: 0x1111, payloadType: 96, pace: .max,
                                                      maxPayloadSize: 300, initialSequenceNumber: 65_530)
        configuration.retransmission = RetransmissionStream(ssrc: Self.rtxSSRC, payloadType: Self.rtxType)
        configuration.retransmissionInitialSequenceNumber = 500
        let now = ManualClock().now()
        var sender = MediaSender(configuration: configuration, frames: Array(frames.prefix(3)),
                                 timebase: format.timebase, now: now)
        var sent: [RTPPacket] = []
        while let output = sender.pollOutput() {
            if case .rtp(let bytes) = output { sent.append(try RTPPacket(parsing: bytes)) }
        }
        return (sender, sent, now)
    }

    @Test func nackIsAnsweredOnTheRTXStream() throws {
        var (sender, sent, now) = try senderWithRTX()
        #expect(sent.count >= 18 && sent.allSatisfy { $0.ssrc == 0x1111 && $0.payloadType == 96 })
        // The NACK names the original stream's SSRC and two numbers across the wrap.
        let lost: [UInt16] = [65_533, 2]
        let nack = RTCPGenericNack(senderSSRC: 0xABCD, mediaSSRC: 0x1111, lost: lost)
        sender.handle(.rtcp(RTCPPacket.serializeCompound([.nack(nack)])), now: now)
        var resent: [RTPPacket] = []
        while let output = sender.pollOutput() {
            if case .rtp(let bytes) = output { resent.append(try RTPPacket(parsing: bytes)) }
        }
        #expect(resent.count == 2)
        for (packet, osn) in zip(resent, lost) {
            let original = try #require(sent.first { $0.sequenceNumber == osn })
            #expect(packet.ssrc == Self.rtxSSRC && packet.payloadType == Self.rtxType)
            #expect(packet.timestamp == original.timestamp && packet.marker == original.marker)
            #expect(Array(packet.payload.prefix(2)) == [UInt8(osn >> 8), UInt8(osn & 0xFF)])
            #expect(Array(packet.payload.dropFirst(2)) == original.payload)
        }
        // The RTX stream numbers its packets itself, from its own start.
        #expect(resent.map(\.sequenceNumber) == [500, 501])
        #expect(sender.stats.retransmissions == 2 && sender.stats.nacksReceived == 1)
    }

    @Test func withoutRTXTheOriginalIsResentAsItWas() throws {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        let now = ManualClock().now()
        var sender = MediaSender(configuration: MediaSender.Configuration(codec: .vp8, ssrc: 0x1111, pace: .max),
                                 frames: Array(frames.prefix(1)), timebase: format.timebase, now: now)
        var sent: [[UInt8]] = []
        while let output = sender.pollOutput() { if case .rtp(let bytes) = output { sent.append(bytes) } }
        let nack = RTCPGenericNack(senderSSRC: 0xABCD, mediaSSRC: 0x1111, lost: [0])
        sender.handle(.rtcp(RTCPPacket.serializeCompound([.nack(nack)])), now: now)
        var resent: [[UInt8]] = []
        while let output = sender.pollOutput() { if case .rtp(let bytes) = output { resent.append(bytes) } }
        #expect(resent == [sent[0]])
    }

    /// Sender and receiver with RTX on both ends, each original packet in `dropped` lost the
    /// first time it is sent.
    private func session(droppingFirstSendOf offsets: Set<Int>, seed: UInt64 = 4) throws
        -> (MediaSessionHarness, [VideoFrame]) {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var random = SeededRandom(seed: seed)
        var sc = MediaSender.Configuration.random(codec: .vp8, using: &random)
        sc.maxPayloadSize = 300
        sc.retransmission = RetransmissionStream(ssrc: Self.rtxSSRC, payloadType: Self.rtxType)
        // Far from the original numbers, so the harness's drop rule (by sequence number) never
        // confuses an RTX packet with an original.
        sc.retransmissionInitialSequenceNumber = sc.initialSequenceNumber &+ 30_000
        var rc = MediaReceiver.Configuration(codec: .vp8, ssrc: 0xABCD)
        rc.payloadType = sc.payloadType
        rc.remoteSSRC = sc.ssrc
        rc.timebase = format.timebase
        rc.timestampOrigin = sc.timestampOrigin
        rc.firstSequenceNumber = sc.initialSequenceNumber
        rc.retransmission = RetransmissionStream(ssrc: Self.rtxSSRC, payloadType: Self.rtxType)
        let (s, r) = (sc, rc)
        var harness = MediaSessionHarness(
            sender: { MediaSender(configuration: s, frames: frames, timebase: format.timebase, now: $0) },
            receiver: { MediaReceiver(configuration: r, now: $0) },
            forward: ImpairmentSpec(delay: .milliseconds(5)), backward: ImpairmentSpec(delay: .milliseconds(5)))
        let victims = Set(offsets.map { sc.initialSequenceNumber &+ UInt16($0) })
        harness.dropRTP = { sequence, count in count == 0 && victims.contains(sequence) }
        return (harness, frames)
    }

    @Test func receiverRecoversTheFramesFromRTX() throws {
        var (session, frames) = try session(droppingFirstSendOf: [3, 10, 11, 40, 90])
        session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        let r = session.receiver.stats, s = session.sender.stats
        #expect(s.retransmissions == 5 && r.retransmissionsReceived == 5 && r.recovered == 5)
        #expect(r.lost == 0 && r.plisSent == 0 && r.wrongPayloadType == 0 && r.wrongSSRC == 0)
    }

    @Test func rtxTheReceiverCannotUseIsCountedAndDropped() throws {
        var receiver = MediaReceiver(configuration: {
            var c = MediaReceiver.Configuration(codec: .vp8, ssrc: 0xABCD)
            c.retransmission = RetransmissionStream(ssrc: Self.rtxSSRC, payloadType: Self.rtxType)
            return c
        }(), now: ManualClock().now())
        let now = ManualClock().now()
        func rtx(ssrc: UInt32 = Self.rtxSSRC, payload: [UInt8], padding: UInt8 = 0) -> [UInt8] {
            RTPPacket(payloadType: Self.rtxType, sequenceNumber: 1, timestamp: 0, ssrc: ssrc, payload: payload,
                      paddingLength: padding).serialized()
        }
        // Before the original stream is known: nothing to map the OSN onto.
        receiver.handle(.rtp(rtx(payload: [0, 1, 9, 9])), now: now)
        // Padding probes, a packet too short for its OSN, and one from another source.
        receiver.handle(.rtp(rtx(payload: [], padding: 200)), now: now)
        receiver.handle(.rtp(rtx(payload: [7])), now: now)
        receiver.handle(.rtp(rtx(ssrc: 42, payload: [0, 1, 9])), now: now)
        let stats = receiver.stats
        #expect(stats.retransmissionsDropped == 2 && stats.retransmissionPadding == 1 && stats.wrongSSRC == 1)
        #expect(stats.retransmissionsReceived == 0 && stats.packetsReceived == 0 && receiver.remoteSSRC == nil)
    }
}
