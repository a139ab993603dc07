// The receiver pieces together over a lossy, jittery path of the tests' in-memory network
// (TestNetwork) on a manual clock: the sender packetizes the VP8 fixture and keeps packets in a
// retransmission buffer; the network drops a seeded share of packets both ways; the receiver's
// NACK generator asks for what is missing (RTCP generic NACK, RFC 4585 §6.2.1), the sender
// resends, and the jitter buffer must still deliver every frame in order, byte for byte.

import TestNetwork
import Testing
import ZoneCore
@testable import Media

@Suite("Loss recovery")
struct LossRecoveryTests {
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
        // The first sequence number as signaling declares it (MediaReceiver's `firstSequenceNumber`):
        // otherwise a lost first packet is one nobody can know was missing.
        jitter.expectFirst(sequenceNumber: sequencer.nextSequenceNumber)
        nacks.expectFirst(sequenceNumber: sequencer.nextSequenceNumber)
        // 20–28 ms each way, 8 % lost.
        let network = TestNetwork(start: start, seed: seed,
                                  link: TestNetwork.link(path: .milliseconds(20), jitter: .milliseconds(8), loss: 0.08))
        let sender = Endpoint(address: .v4(0x0A00_0001), port: 5000)
        let receiver = Endpoint(address: .v4(0x0A00_0002), port: 6000)
        var events: [JitterBufferEvent] = []
        var nacksSent = 0, resent = 0, keyframeRequests = 0

        func send(_ bytes: [UInt8], toReceiver: Bool) {
            network.send(bytes, from: toReceiver ? sender : receiver, to: toReceiver ? receiver : sender)
        }

        var nextFrame = 0
        while clock.now() < start + .seconds(4) {
            let now = clock.now()
            // The sender: one frame every 33 ms.
            if nextFrame < frames.count && now >= start + .milliseconds(Int64(nextFrame) * 33) {
                let chunks = try packetizer.packetize(frames[nextFrame])
                for packet in sequencer.packets(for: chunks, mediaTimestamp: Int64(nextFrame) * 3000) {
                    retransmissions.store(packet, now: now)
                    send(packet.serialized(), toReceiver: true)
                }
                nextFrame += 1
            }
            // Deliveries due now.
            network.advance(to: now)
            while let datagram = network.arrival(notAfter: now) {
                if datagram.to == receiver {
                    let packet = try RTPPacket(parsing: datagram.payload)
                    nacks.received(sequenceNumber: packet.sequenceNumber, now: now)
                    jitter.insert(packet, now: now)
                } else {
                    for case .nack(let nack) in try RTCPPacket.parseCompound(datagram.payload) {
                        for packet in retransmissions.packets(for: nack, now: now) {
                            resent += 1
                            send(packet.serialized(), toReceiver: true)
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
                send(RTCPPacket.nack(nack).serialized(), toReceiver: false)
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
