// The media of a call as a machine of its own, on a manual clock: it feeds its sender the
// file's frames, reports `.finished` once when its streams end, and after `.stop` (the call hung
// up) hands out nothing more and ignores what still arrives.
import Foundation
import Media
import Signaling
import Testing
import ZoneCore

@testable import Peer

@Suite struct CallMediaTests {
    /// A sending media, connected, after zonertc's offer and aiortc's answer (VP8 at 96).
    static func connectedSender(frames count: Int) throws -> (CallMedia, [VideoFrame], Instant) {
        let (format, frames) = try BrowserMediaTests.vp8Fixture()
        let now = ManualClock().now()
        let outgoing = CallMediaConfiguration.Outgoing(format: format, frames: Array(frames.prefix(count)))
        var media = CallMedia(configuration: CallMediaConfiguration(send: outgoing, pace: .max), seed: 5)
        let offer = try BrowserMediaTests.description("zonertc-offer-sendonly-vp8.sdp", .offer)
        let answer = try BrowserMediaTests.description("aiortc-answer-to-zonertc-vp8.sdp", .answer)
        media.handle(.localDescription(offer), now: now)
        media.handle(.remoteDescription(answer), now: now)
        media.handle(.connected, now: now)
        return (media, Array(frames.prefix(count)), now)
    }

    /// Every output until the media has nothing more to do (at most `limit` of virtual time).
    static func runToEnd(_ media: inout CallMedia, from start: Instant) -> [CallMedia.Output] {
        var outputs: [CallMedia.Output] = []
        var now = start
        while now - start < .seconds(10) {
            outputs += media.drainOutputs()
            guard let next = media.nextDeadline else { break }
            now = max(now, next)
            media.handle(.timer, now: now)
        }
        return outputs
    }

    @Test func everyFrameIsFedToTheSenderAndFinishedComesOnce() throws {
        var (media, frames, now) = try Self.connectedSender(frames: 12)
        let outputs = Self.runToEnd(&media, from: now)
        var depacketizer = VP8Depacketizer()
        var rebuilt: [[UInt8]] = []
        var payloads: [[UInt8]] = []
        for case .packet(let bytes) in outputs where !(192...223).contains(bytes[1]) {
            let packet = try RTPPacket(parsing: bytes)
            payloads.append(packet.payload)
            if packet.marker {
                rebuilt.append(try depacketizer.depacketize(payloads))
                payloads = []
            }
        }
        #expect(rebuilt == frames.map(\.bytes))
        #expect(media.stats.framesSent == 12)
        #expect(outputs.filter { if case .finished = $0 { true } else { false } }.count == 1)
        // A PLI after the end is counted by the sender, not handed out, and finishes nothing again.
        let pli = RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 3_142_153_527)
        media.handle(.packet(RTCPPacket.serializeCompound([.pictureLossIndication(pli)])), now: now + .seconds(20))
        #expect(media.drainOutputs().isEmpty)
    }

    /// At `--pace max` the sender runs at most `window` packets ahead of the receiver's last
    /// report; a report opens the window again; without reports it lapses, and every frame goes.
    @Test func atMaxPaceTheSenderWaitsForTheReceiversReports() throws {
        let (format, frames) = try BrowserMediaTests.vp8Fixture()
        let now = ManualClock().now()
        var configuration = CallMediaConfiguration(send: .init(format: format, frames: Array(frames.prefix(30))),
                                                   pace: .max)
        configuration.window = 4
        var media = CallMedia(configuration: configuration, seed: 5)
        media.handle(.localDescription(try BrowserMediaTests.description("zonertc-offer-sendonly-vp8.sdp", .offer)),
                     now: now)
        media.handle(.remoteDescription(try BrowserMediaTests.description("aiortc-answer-to-zonertc-vp8.sdp",
                                                                           .answer)), now: now)
        media.handle(.connected, now: now)
        func originals(_ outputs: [CallMedia.Output]) throws -> [UInt16] {
            var out: [UInt16] = []
            for case .packet(let bytes) in outputs where !(192...223).contains(bytes[1]) {
                out.append(try RTPPacket(parsing: bytes).sequenceNumber)
            }
            return out
        }
        let first = try originals(media.drainOutputs())
        #expect(first.count == 4)
        let report = RTCPReportBlock(ssrc: 3_142_153_527, extendedHighestSequence: UInt32(try #require(first.first)) + 1)
        media.handle(.packet(RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: 9, reports: [report]))])),
                     now: now + .milliseconds(1))
        // Two reported: two more may go.
        #expect(try originals(media.drainOutputs()).count == 2)
        let rest = try originals(Self.runToEnd(&media, from: now + .milliseconds(1)))
        #expect(media.stats.framesSent == 30 && first.count + 2 + rest.count == media.stats.packetsSent)
    }

    @Test func afterStopNothingGoesOutAndNothingIsTaken() throws {
        var (media, _, now) = try Self.connectedSender(frames: 3)
        var running = media
        #expect(media.pollOutput() != nil)
        media.handle(.stop, now: now)
        #expect(media.pollOutput() == nil)
        #expect(media.nextDeadline == nil)
        // The same NACK: answered by the running media, ignored by the stopped one.
        var sequence: UInt16?
        for case .packet(let bytes) in running.drainOutputs() where !(192...223).contains(bytes[1]) {
            if sequence == nil { sequence = try RTPPacket(parsing: bytes).sequenceNumber }
        }
        let nack = RTCPGenericNack(senderSSRC: 1, mediaSSRC: 3_142_153_527, lost: [try #require(sequence)])
        now = now + .milliseconds(1)
        running.handle(.packet(RTCPPacket.serializeCompound([.nack(nack)])), now: now)
        media.handle(.packet(RTCPPacket.serializeCompound([.nack(nack)])), now: now)
        #expect(running.drainOutputs().count == 1 && running.stats.retransmissions == 1)
        #expect(media.drainOutputs().isEmpty && media.nextDeadline == nil)
        #expect(media.stats.nacksReceived == 0 && running.stats.nacksReceived == 1)
    }
}
