// The goodbye on a leg's path (docs/PROTOCOL.md §11.4): what a plain goodbye is, what is not one, and its
// copies. Where it must come from (the leg's selected pair) is checked by the simulated group calls
// (`RoomTrialTests`), its DTLS form by `DTLSTransportTests`.
import Media
import Testing
import ZoneCore

@testable import Peer

@Suite struct MediaGoodbyeTests {
    static let fragment = "Xk3q"

    @Test func aPlainGoodbyeIsRecognizedOnlyForItsEpochAndSource() {
        let packet = MediaGoodbye.plainPacket(source: 0x1234_5678, fragment: Self.fragment)
        #expect(MediaGoodbye.isPlainGoodbye(packet, remoteFragment: Self.fragment, remoteSource: nil))
        #expect(MediaGoodbye.isPlainGoodbye(packet, remoteFragment: Self.fragment, remoteSource: 0x1234_5678))
        // Another epoch's (or leg's) goodbye, or another source's, is not ours to end the leg on.
        #expect(!MediaGoodbye.isPlainGoodbye(packet, remoteFragment: "other", remoteSource: nil))
        #expect(!MediaGoodbye.isPlainGoodbye(packet, remoteFragment: Self.fragment, remoteSource: 0x1234_5679))
        // The BYE that ends a media stream names no reason: the stream ends, the leg stays.
        let streamEnd = RTCPPacket.serializeCompound([
            .receiverReport(RTCPReceiverReport(ssrc: 0x1234_5678)), .goodbye(RTCPGoodbye(sources: [0x1234_5678])),
        ])
        #expect(!MediaGoodbye.isPlainGoodbye(streamEnd, remoteFragment: Self.fragment, remoteSource: nil))
    }

    @Test func anythingElseIsNotAGoodbyeWholeTruncatedOrAltered() {
        let packet = MediaGoodbye.plainPacket(source: 7, fragment: Self.fragment)
        for length in 0..<packet.count {
            #expect(!MediaGoodbye.isPlainGoodbye(Array(packet.prefix(length)), remoteFragment: Self.fragment,
                                                 remoteSource: nil))
        }
        var random = SeededRandom(seed: 28)
        for _ in 0..<200 {
            var altered = packet
            let i = Int(random.next() % UInt64(packet.count))
            altered[i] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            // A flip may leave a valid packet (a padding bit, the source when none is known), but never one
            // naming a fragment two bytes away, and it never traps.
            #expect(!MediaGoodbye.isPlainGoodbye(altered, remoteFragment: "Yl4r", remoteSource: nil))
        }
        let rtp: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 7]
        #expect(!MediaGoodbye.isPlainGoodbye(rtp, remoteFragment: Self.fragment, remoteSource: nil))
    }

    @Test func theGoodbyeGoesThreeTimesFiveMillisecondsApartThenStops() {
        let start = Instant.seconds(1_700_000_000)
        let path = (bytes: [UInt8](repeating: 1, count: 4), from: Endpoint(address: .loopbackV4, port: 1),
                    to: Endpoint(address: .loopbackV4, port: 2))
        var goodbye = MediaGoodbye()
        goodbye.firstCopy([path], now: start)
        #expect(goodbye.nextDeadline == start + .milliseconds(5))
        #expect(goodbye.due(now: start + .milliseconds(4)).isEmpty)
        #expect(goodbye.due(now: start + .milliseconds(5)).count == 1)
        #expect(goodbye.due(now: start + .milliseconds(10)).count == 1)
        #expect(goodbye.isDone && goodbye.nextDeadline == nil)
        #expect(goodbye.due(now: start + .seconds(1)).isEmpty)
        #expect(goodbye.sent == MediaGoodbye.copies)
    }
}
