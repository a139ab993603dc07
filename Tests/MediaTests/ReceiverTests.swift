// The jitter buffer, the NACK generator and the retransmission buffer, driven by a manual clock.

import Testing
import ZoneCore
@testable import Media

/// Packets of `frames` one-packet-or-more generic frames, from sequence number `first`.
private func genericPackets(_ frameSizes: [Int], first: UInt16 = 100, mtu: Int = 12) throws -> [RTPPacket] {
    var packetizer = GenericPacketizer(maxPayloadSize: mtu)
    var sequencer = RTPSequencer(ssrc: 7, payloadType: 96, initialSequenceNumber: first, timestampOffset: 0)
    var out: [RTPPacket] = []
    for (i, size) in frameSizes.enumerated() {
        out += sequencer.packets(for: try packetizer.packetize(Array(repeating: UInt8(i), count: size)),
                                 mediaTimestamp: Int64(i) * 3000)
    }
    return out
}

private func frames(_ events: [JitterBufferEvent]) -> [UInt8] {
    events.compactMap { if case .frame(let f) = $0 { f.bytes.first } else { nil } }
}

@Suite("Receiver")
struct ReceiverTests {
    @Test func jitterBufferWaitsOneLatencyAtStartThenEmitsInOrder() throws {
        let packets = try genericPackets([5, 15, 5])  // frame 1 has two packets (mtu 12 - 2)
        let clock = ManualClock()
        var buffer = JitterBuffer(depacketizer: GenericDepacketizer(), configuration: .init(latency: .milliseconds(50)))
        #expect(buffer.insert(packets[1], now: clock.now()) == .accepted)
        #expect(buffer.poll(now: clock.now()).isEmpty)
        clock.advance(by: .milliseconds(10))
        #expect(buffer.insert(packets[0], now: clock.now()) == .accepted)
        #expect(buffer.insert(packets[0], now: clock.now()) == .duplicate)
        #expect(buffer.poll(now: clock.now()).isEmpty)  // still within the start-up latency
        #expect(buffer.nextDeadline == clock.now() + .milliseconds(40))
        clock.advance(by: .milliseconds(39))
        #expect(buffer.insert(packets[2], now: clock.now()) == .accepted)
        #expect(buffer.poll(now: clock.now()).isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(frames(buffer.poll(now: clock.now())) == [0, 1])
        #expect(buffer.insert(packets[3], now: clock.now()) == .accepted)
        #expect(frames(buffer.poll(now: clock.now())) == [2])  // in order and complete: at once
        #expect(buffer.insert(packets[0], now: clock.now()) == .late)
    }

    @Test func jitterBufferSkipsALostPacketAfterTheLatency() throws {
        let packets = try genericPackets([5, 15, 5, 5])
        let clock = ManualClock()
        var buffer = JitterBuffer(depacketizer: GenericDepacketizer(), configuration: .init(latency: .milliseconds(50)))
        buffer.insert(packets[0], now: clock.now())
        clock.advance(by: .milliseconds(50))
        #expect(frames(buffer.poll(now: clock.now())) == [0])
        // Packet 1 (first half of frame 1) is lost; frames 2 and 3 arrive.
        for packet in packets[2...] { buffer.insert(packet, now: clock.now()) }
        #expect(buffer.poll(now: clock.now()).isEmpty)
        clock.advance(by: .milliseconds(49))
        #expect(buffer.poll(now: clock.now()).isEmpty)
        clock.advance(by: .milliseconds(1))
        let events = buffer.poll(now: clock.now())
        let base = events.compactMap { if case .frame(let f) = $0 { f.sequenceNumbers.lowerBound } else { nil } }.first!
        #expect(events.count == 3)
        #expect(events[0] == .gap((base - 2)..<base))  // packets 1 and 2: frame 1, lost and incomplete
        #expect(frames(events) == [2, 3])
        #expect(buffer.count == 0 && buffer.nextDeadline == nil)
    }

    @Test func jitterBufferDropsExpiredFragmentsWithoutAFrame() throws {
        let packets = try genericPackets([5, 15])
        let clock = ManualClock()
        var buffer = JitterBuffer(depacketizer: GenericDepacketizer(), configuration: .init(latency: .milliseconds(20)))
        buffer.insert(packets[0], now: clock.now())
        clock.advance(by: .milliseconds(20))
        #expect(frames(buffer.poll(now: clock.now())) == [0])
        buffer.insert(packets[2], now: clock.now())  // the tail of frame 1; its head is lost
        clock.advance(by: .milliseconds(20))
        let events = buffer.poll(now: clock.now())
        #expect(events.count == 1)
        if case .gap(let range) = events.first { #expect(range.count == 2) } else { Issue.record("\(events)") }
        #expect(buffer.count == 0)
    }

    @Test func nackGeneratorRetriesAtTheRTTThenAsksForAKeyframe() {
        let clock = ManualClock()
        var nacks = NackGenerator(configuration: .init(maxRetries: 2, minimumResendInterval: .milliseconds(20)),
                                  initialRoundTripTime: .milliseconds(50))
        nacks.received(sequenceNumber: 65533, now: clock.now())
        nacks.received(sequenceNumber: 1, now: clock.now())  // 65534, 65535, 0 are missing
        #expect(nacks.missingSequenceNumbers == [65534, 65535, 0])
        #expect(nacks.poll(now: clock.now()) == NackRequest(sequenceNumbers: [65534, 65535, 0]))
        #expect(nacks.poll(now: clock.now()).isEmpty)
        #expect(nacks.nextDeadline == clock.now() + .milliseconds(50))
        nacks.received(sequenceNumber: 65535, now: clock.now())  // a retransmission arrives
        clock.advance(by: .milliseconds(50))
        #expect(nacks.poll(now: clock.now()) == NackRequest(sequenceNumbers: [65534, 0]))
        nacks.updateRoundTripTime(.milliseconds(5))  // below the floor: resend every 20 ms
        clock.advance(by: .milliseconds(20))
        #expect(nacks.poll(now: clock.now()) == NackRequest(sequenceNumbers: [], requestKeyframe: true))
        #expect(nacks.missingSequenceNumbers.isEmpty && nacks.nextDeadline == nil)
    }

    @Test func nackGeneratorWaitsForReorderingAndKeepsTheNewestOfHugeGaps() {
        let clock = ManualClock()
        var nacks = NackGenerator(configuration: .init(reorderingDelay: .milliseconds(10), maxMissing: 100))
        nacks.received(sequenceNumber: 10, now: clock.now())
        nacks.received(sequenceNumber: 12, now: clock.now())
        #expect(nacks.poll(now: clock.now()).isEmpty)
        clock.advance(by: .milliseconds(5))
        nacks.received(sequenceNumber: 11, now: clock.now())  // just reordered
        clock.advance(by: .milliseconds(5))
        #expect(nacks.poll(now: clock.now()).isEmpty)
        nacks.received(sequenceNumber: 500, now: clock.now())  // 13…499: only the newest 100 are kept
        #expect(nacks.poll(now: clock.now()) == NackRequest(requestKeyframe: true))
        #expect(nacks.missingSequenceNumbers == Array(400..<500))
        nacks.received(sequenceNumber: 505, now: clock.now())
        nacks.forget(before: 503)
        clock.advance(by: .milliseconds(10))
        #expect(nacks.poll(now: clock.now()) == NackRequest(sequenceNumbers: [503, 504], requestKeyframe: true))
    }

    @Test func retransmissionBufferAnswersNacksWithinItsBounds() {
        let clock = ManualClock()
        var buffer = RetransmissionBuffer(capacity: 4, maxAge: .milliseconds(130))
        for sequence: UInt16 in [65534, 65535, 0, 1, 2] {
            buffer.store(RTPPacket(payloadType: 96, sequenceNumber: sequence, timestamp: 0, ssrc: 1, payload: [1]),
                         now: clock.now())
            clock.advance(by: .milliseconds(30))
        }
        #expect(buffer.packet(sequenceNumber: 65534, now: clock.now()) == nil)  // evicted by 2
        let nack = RTCPGenericNack(senderSSRC: 2, mediaSSRC: 1, lost: [65534, 65535, 0, 1, 2, 3])
        #expect(buffer.packets(for: nack, now: clock.now()).map(\.sequenceNumber) == [65535, 0, 1, 2])
        clock.advance(by: .milliseconds(30))  // 65535 is now 150 ms old
        #expect(buffer.packets(for: nack, now: clock.now()).map(\.sequenceNumber) == [0, 1, 2])
    }
}
