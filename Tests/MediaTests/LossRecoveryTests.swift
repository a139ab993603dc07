// The receiver pieces together over a lossy, jittery simulated path on a manual clock: the
// sender packetizes the VP8 fixture and keeps packets in a retransmission buffer; the network
// drops a seeded share of packets both ways; the receiver's NACK generator asks for what is
// missing (RTCP generic NACK, RFC 4585 §6.2.1), the sender resends, and the jitter buffer must
// still deliver every frame in order, byte for byte.

import Testing
import ZoneCore
@testable import Media

@Suite("Loss recovery")
struct LossRecoveryTests {
    private struct Datagram {
        var arrival: Instant
        var bytes: [UInt8]
        var toReceiver: Bool
    }

    @Test(arguments: [UInt64(11), 12, 13])
    func nackAndRetransmissionRepairSeededLoss(seed: UInt64) throws {
        let frames = try IVFReader.read(Fixture.bytes("vp8-320x240-60.ivf")).frames.map(\.bytes)
        var random = SeededRandom(seed: seed)
        let clock = ManualClock()
        let start = clock.now()
        var packetizer = VP8Packetizer(maxPayloadSize: 600)
        var sequencer = RTPSequencer(payloadType: 96, random: &random)
        var retransmissions = RetransmissionBuffer(capacity: 512, maxAge: .seconds(1))
        var jitter = JitterBuffer(depacketizer: VP8Depacketizer(), configuration: .init(latency: .milliseconds(250)))
        var nacks = NackGenerator(configuration: .init(maxRetries: 5), initialRoundTripTime: .milliseconds(40))
        var network: [Datagram] = []
        var events: [JitterBufferEvent] = []
        var nacksSent = 0, resent = 0, keyframeRequests = 0

        func send(_ bytes: [UInt8], toReceiver: Bool, random: inout SeededRandom) {
            guard !random.chance(0.08) else { return }  // lost
            let delay = Duration.milliseconds(20) + .microseconds(Int64(random.next() % 8000))
            network.append(Datagram(arrival: clock.now() + delay, bytes: bytes, toReceiver: toReceiver))
        }

        var nextFrame = 0
        while clock.now() < start + .seconds(4) {
            let now = clock.now()
            // The sender: one frame every 33 ms.
            if nextFrame < frames.count && now >= start + .milliseconds(Int64(nextFrame) * 33) {
                let chunks = try packetizer.packetize(frames[nextFrame])
                for packet in sequencer.packets(for: chunks, mediaTimestamp: Int64(nextFrame) * 3000) {
                    retransmissions.store(packet, now: now)
                    send(packet.serialized(), toReceiver: true, random: &random)
                }
                nextFrame += 1
            }
            // Deliveries due now.
            let due = network.filter { $0.arrival <= now }
            network.removeAll { $0.arrival <= now }
            for datagram in due {
                if datagram.toReceiver {
                    let packet = try RTPPacket(parsing: datagram.bytes)
                    nacks.received(sequenceNumber: packet.sequenceNumber, now: now)
                    jitter.insert(packet, now: now)
                } else {
                    for case .nack(let nack) in try RTCPPacket.parseCompound(datagram.bytes) {
                        for packet in retransmissions.packets(for: nack, now: now) {
                            resent += 1
                            send(packet.serialized(), toReceiver: true, random: &random)
                        }
                    }
                }
            }
            // The receiver.
            events += jitter.poll(now: now)
            let request = nacks.poll(now: now)
            if !request.sequenceNumbers.isEmpty {
                nacksSent += 1
                let nack = RTCPGenericNack(senderSSRC: 1, mediaSSRC: sequencer.ssrc, lost: request.sequenceNumbers)
                send(RTCPPacket.nack(nack).serialized(), toReceiver: false, random: &random)
            }
            if request.requestKeyframe { keyframeRequests += 1 }
            clock.advance(by: .milliseconds(1))
        }
        let received = events.compactMap { if case .frame(let f) = $0 { f.bytes } else { nil } }
        #expect(received == frames)
        #expect(events.count == frames.count)  // no gaps, no corrupt frames
        #expect(nacksSent > 0 && resent > 0 && keyframeRequests == 0)
        #expect(jitter.count == 0 && nacks.missingSequenceNumbers.isEmpty)
    }
}
