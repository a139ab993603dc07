// Losses the NACK loop must still repair, on a manual clock: a burst larger than the NACK
// generator's tracking limit, a packet lost again after its NACK, a whole frame's packets, and the
// end of the stream lost so that no later packet reveals it (only the sender's last report, whose
// packet count says where the stream ends, RFC 3550 §6.4.1).

import Testing
import ZoneCore
@testable import Media

@Suite("NACK repair")
struct NackRepairTests {
    @Test func aBurstLargerThanTheTrackingLimitIsStillNacked() {
        let clock = ManualClock()
        var nacks = NackGenerator(configuration: .init(maxMissing: 100))
        nacks.received(sequenceNumber: 10, now: clock.now())
        nacks.received(sequenceNumber: 300, now: clock.now())  // 11…299 lost: 289 > 100
        let request = nacks.poll(now: clock.now())
        // The newest hundred are asked for; the older ones are given up, with a keyframe request.
        #expect(request.sequenceNumbers == Array(200..<300))
        #expect(request.requestKeyframe)
    }

    @Test func aGapThatOverflowsTheLimitKeepsTheNewestMissing() {
        let clock = ManualClock()
        var nacks = NackGenerator(configuration: .init(maxMissing: 100))
        nacks.received(sequenceNumber: 0, now: clock.now())
        nacks.received(sequenceNumber: 60, now: clock.now())  // 1…59 missing
        nacks.received(sequenceNumber: 120, now: clock.now())  // 61…119 too: 118 in all
        #expect(nacks.missingCount == 100)
        let request = nacks.poll(now: clock.now())
        #expect(request.sequenceNumbers == Array(19..<60) + Array(61..<120))
        #expect(request.requestKeyframe)
    }

    @Test func aNackedPacketLostAgainIsNackedAgainUntilItArrives() {
        let clock = ManualClock()
        var nacks = NackGenerator(configuration: .init(maxRetries: 3, minimumResendInterval: .milliseconds(10)),
                                  initialRoundTripTime: .milliseconds(30))
        nacks.received(sequenceNumber: 1, now: clock.now())
        nacks.received(sequenceNumber: 3, now: clock.now())
        #expect(nacks.poll(now: clock.now()).sequenceNumbers == [2])
        clock.advance(by: .milliseconds(29))
        #expect(nacks.poll(now: clock.now()).isEmpty)  // not before one RTT
        clock.advance(by: .milliseconds(1))
        #expect(nacks.poll(now: clock.now()).sequenceNumbers == [2])  // the resend was lost too
        clock.advance(by: .milliseconds(5))
        let repaired = nacks.received(sequenceNumber: 2, now: clock.now())
        #expect(repaired)  // an answer to a NACK, not mere reordering
        #expect(nacks.missingCount == 0 && nacks.nextDeadline == nil)
    }

    @Test func theEndOfTheStreamIsNackedOnceTheSenderSaysWhereItEnds() {
        let clock = ManualClock()
        var nacks = NackGenerator()
        nacks.received(sequenceNumber: 65534, now: clock.now())
        nacks.expectLast(sequenceNumber: 1, now: clock.now())  // 65535, 0, 1 never came
        #expect(nacks.poll(now: clock.now()).sequenceNumbers == [65535, 0, 1])
        nacks.expectLast(sequenceNumber: 1, now: clock.now())  // a repeated BYE adds nothing
        let repaired = nacks.received(sequenceNumber: 0, now: clock.now())
        #expect(repaired)
        #expect(nacks.missingSequenceNumbers == [65535, 1])
    }

    /// A VP8 session over a 5 ms path each way whose RTP is dropped by `drop` (sequence offset
    /// from the first, how many times that packet was sent before, and the stream's packet count).
    private func session(drop: @escaping (_ offset: Int, _ sends: Int, _ total: Int) -> Bool,
                         tune: @escaping (inout MediaReceiver.Configuration) -> Void = { _ in })
        throws -> (MediaSessionHarness, [VideoFrame]) {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        var counter = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase, maxPayloadSize: 300)
        counter.run()
        let total = counter.sender.stats.packetsSent
        var session = MediaSessionHarness(frames: frames, codec: .vp8, timebase: format.timebase,
                                          forward: ImpairmentSpec(delay: .milliseconds(5)),
                                          backward: ImpairmentSpec(delay: .milliseconds(5)),
                                          maxPayloadSize: 300, tune: tune)
        let first = session.sender.configuration.initialSequenceNumber
        session.dropRTP = { sequence, count in drop(Int(sequence &- first), count, total) }
        return (session, frames)
    }

    @Test func aTailLostTwiceIsNackedByTheReceiverAndRepaired() throws {
        // The last three packets are lost when sent and again when the sender resends the tail
        // its receiver report showed missing: only the receiver's own NACKs bring them.
        var (session, frames) = try session(drop: { offset, sends, total in offset >= total - 3 && sends < 2 })
        session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        let r = session.receiver.stats
        #expect(r.lost == 0 && r.nacksSent >= 1 && r.recovered >= 3)
    }

    @Test func aTailNeverDeliveredIsCountedLostAndAnsweredWithAPLI() throws {
        var (session, frames) = try session(drop: { offset, _, total in offset >= total - 3 })
        session.run()
        #expect(session.finished)
        let r = session.receiver.stats
        #expect(r.lost >= 3 && r.plisSent >= 1 && r.nacksSent >= 1)
        #expect(session.received.count < frames.count)
    }

    @Test func aWholeFrameLostTwiceIsRepaired() throws {
        // Packets 30…39 (frames of several packets each) lost on their first two sends.
        var (session, frames) = try session(drop: { offset, sends, _ in (30..<40).contains(offset) && sends < 2 })
        session.run()
        #expect(session.finished)
        #expect(session.receivedEqual(frames), "\(session.difference(from: frames))")
        #expect(session.receiver.stats.lost == 0 && session.receiver.stats.recovered == 10)
    }

    @Test func aBurstBeyondTheTrackingLimitIsStillNackedInASession() throws {
        // Forty packets lost at once with room to track only sixteen: the newest sixteen are
        // NACKed and repaired, the rest given up with a PLI (before, nothing was NACKed).
        var (session, _) = try session(drop: { offset, sends, _ in (20..<60).contains(offset) && sends == 0 },
                                          tune: { $0.nack.maxMissing = 16 })
        session.run()
        #expect(session.finished)
        let r = session.receiver.stats
        #expect(r.nacksSent >= 1 && r.nackedPackets >= 16 && r.recovered >= 16 && r.plisSent >= 1)
    }
}
