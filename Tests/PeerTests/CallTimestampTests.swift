// Exact timestamps on the call path: a file whose first pts is not 0 is recorded with the same
// pts, in every container, because the sender names its first frame's RTP timestamp and pts.

import Foundation
import Media
import Peer
import Testing

@Suite struct CallTimestampTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Frames shifted by `seconds` (whole ticks of the file's time base), one call in memory.
    @Test(arguments: [("vp8-320x240-60.ivf", 1), ("h264-320x240-60.h264", 1), ("testsrc-32x24-5.y4m", 1),
                      // 10 hours: past 2^31 ticks of the 90 kHz RTP clock, so the RTP timestamp wraps.
                      ("vp8-320x240-60.ivf", 36_000)])
    func offsetFileArrivesWithItsTimestamps(file: String, seconds: Int64) async throws {
        let (format, original) = try VideoFileSource.read(path: Self.fixtures.appendingPathComponent(file).path)
        let tb = format.timebase
        let shift = seconds * Int64(tb.denominator) / Int64(tb.numerator)
        let frames = original.map { VideoFrame(bytes: $0.bytes, pts: $0.pts + shift) }
        #expect(frames.first?.pts != 0)
        let send = CallMediaConfiguration(send: .init(format: format, frames: frames), pace: .max)
        let h = try await MemoryCallHarness(strategy: .push, media: (send, CallMediaConfiguration(receive: true)))
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let done = await h.run(for: .seconds(60)) { h.a.finished && h.b.finished }
        #expect(done)
        #expect(h.b.frames.map(\.pts) == frames.map(\.pts))
        // Bytes as the codec's canonical form (H.264 start codes normalized), pts and sizes.
        let received = FrameChecksum.of(h.b.frames.map { VideoFrame(bytes: $0.bytes, pts: $0.pts) },
                                        codec: format.codec).digest
        #expect(received == FrameChecksum.of(frames, codec: format.codec).digest)
        #expect(h.a.call.media.stats.sentDigest == h.b.call.media.stats.receivedDigest)
    }

    @Test func originAttributeRoundTripsAndRefusesGarbage() throws {
        let origin = RTPTimestampOrigin(rtpTimestamp: 4_000_000_000, pts: -3)
        #expect(try RTPTimestampOrigin(attributeValue: origin.attributeValue) == origin)
        // The plain-RTP form (`RTPStreamDescription`) gives only the RTP timestamp of pts 0.
        #expect(try RTPTimestampOrigin(attributeValue: "99") == RTPTimestampOrigin(rtpTimestamp: 99, pts: 0))
        for bad in ["", "4294967296 0", "-1 0", "1 2 3", "x 1", "1 9223372036854775808", "1 0x10"] {
            #expect(throws: MediaError.self, "'\(bad)'") { try RTPTimestampOrigin(attributeValue: bad) }
        }
        // What the sender stamps its first frame with: pts 0's RTP timestamp plus the pts on the
        // 90 kHz clock, wrapping.
        let first = RTPTimestampOrigin(sendingFromZero: 0xFFFF_FFF0, firstPTS: 30,
                                       timebase: Timebase(numerator: 1, denominator: 30))
        #expect(first.rtpTimestamp == 0xFFFF_FFF0 &+ 90_000 && first.pts == 30)
    }
}
