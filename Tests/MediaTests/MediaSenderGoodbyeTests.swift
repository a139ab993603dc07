// The sender's last word (RFC 3550 §6.6): whichever way it finishes, a BYE goes out before its
// `.finished`. `zonertc media receive` ends on the BYE; without one it waits out its idle timeout
// (the intermittent "send → receive on loopback" failure: a report confirming the stream arrived
// within the BYE's 20 ms delay, and the sender finished without saying BYE).

import Testing
import ZoneCore
@testable import Media

@Suite("Media sender BYE")
struct MediaSenderGoodbyeTests {
    /// A sender of the fixture's first frames, unpaced, drained until only the delayed BYE is left.
    static func drainedSender() throws -> (sender: MediaSender, clock: ManualClock, lastSequence: UInt16) {
        let (format, frames) = try fixtureStream("vp8-320x240-60.ivf")
        let configuration = MediaSender.Configuration(codec: .vp8, ssrc: 1, pace: .max, initialSequenceNumber: 100)
        let clock = ManualClock()
        var sender = MediaSender(configuration: configuration, frames: Array(frames.prefix(3)),
                                 timebase: format.timebase, now: clock.now())
        sender.handle(.timer, now: clock.now())
        var lastSequence: UInt16?
        while let output = sender.pollOutput() {
            if case .rtp(let bytes) = output { lastSequence = try RTPPacket(parsing: bytes).sequenceNumber }
            if case .rtcp(let bytes) = output { #expect(!goodbyeSources(bytes).contains(1)) }
        }
        return (sender, clock, try #require(lastSequence))
    }

    /// The SSRCs said goodbye in an RTCP compound packet.
    static func goodbyeSources(_ bytes: [UInt8]) -> [UInt32] {
        ((try? RTCPPacket.parseCompound(bytes)) ?? []).flatMap { packet -> [UInt32] in
            if case .goodbye(let bye) = packet { return bye.sources }
            return []
        }
    }

    static func isGoodbye(_ output: MediaSender.Output) -> Bool {
        if case .rtcp(let bytes) = output { return goodbyeSources(bytes) == [1] }
        return false
    }

    /// A receiver report that has seen every packet up to `last`, none lost.
    static func completeReport(through last: UInt16) -> [UInt8] {
        RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: 9, reports: [
            RTCPReportBlock(ssrc: 1, extendedHighestSequence: UInt32(last)),
        ]))])
    }

    static func outputs(of sender: inout MediaSender) -> [MediaSender.Output] {
        var outputs: [MediaSender.Output] = []
        while let output = sender.pollOutput() { outputs.append(output) }
        return outputs
    }

    @Test func aReportConfirmingTheStreamBeforeTheFirstByeStillEndsWithABye() throws {
        let drained = try Self.drainedSender()
        var sender = drained.sender
        drained.clock.advance(by: .milliseconds(5))  // inside the 20 ms before the first BYE
        sender.handle(.rtcp(Self.completeReport(through: drained.lastSequence)), now: drained.clock.now())
        let outputs = Self.outputs(of: &sender)
        #expect(sender.stats.confirmedComplete && sender.isFinished)
        let bye = outputs.firstIndex(where: Self.isGoodbye)
        #expect(bye != nil, "\(outputs)")
        #expect(outputs.last == .event(.finished) && bye.map { $0 < outputs.count - 1 } == true)
    }

    @Test func aSenderThatSaidByeDoesNotSayItAgainWhenConfirmed() throws {
        let drained = try Self.drainedSender()
        var sender = drained.sender
        drained.clock.advance(by: .milliseconds(25))
        sender.handle(.timer, now: drained.clock.now())
        #expect(Self.outputs(of: &sender).filter(Self.isGoodbye).count == 1)
        sender.handle(.rtcp(Self.completeReport(through: drained.lastSequence)), now: drained.clock.now())
        #expect(Self.outputs(of: &sender) == [.event(.finished)])
    }
}
