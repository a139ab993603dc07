// The call's one route (issue #12): every output of signaling, the transport, the protection and
// the media passes through it in order, so an ICE state change the transport queued while media
// was being sent is seen and acted on, never dropped.
import Foundation
import ICE
import Media
import Peer
import Signaling
import Testing
import ZoneCore

@Suite struct PeerCallRouteTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// A sender at the file's pace, its file looped long enough that media is still being sent
    /// whenever the transport reports anything.
    private func streaming(lifetime: CallLifetime = CallLifetime(),
                           consent: ConsentConfiguration = ConsentConfiguration()) async throws -> MemoryCallHarness {
        let file = Self.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let (format, frames) = try VideoFileSource.read(path: file)
        // Sent over and over, so media is still draining when the path fails.
        let span = (frames.last?.pts ?? 0) + 1
        let many = (0..<20).flatMap { round in
            frames.map { VideoFrame(bytes: $0.bytes, pts: $0.pts + Int64(round) * span) }
        }
        let send = CallMediaConfiguration(send: .init(format: format, frames: many), pace: .realtime)
        return try await MemoryCallHarness(strategy: .push, media: (send, CallMediaConfiguration()),
                                           lifetime: lifetime, consent: consent)
    }

    /// The transport selects a pair and then reports `completed` (the controlling side) or
    /// `connected`; the sender starts its media at the selection. Both reach the call, in the
    /// order the transport reported them (the media sent at the selection once swallowed the
    /// state change queued behind it).
    @Test func aSendingPeerSeesICEConnectedAfterItsPair() async throws {
        let h = try await streaming()
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let sending = await h.run(for: .seconds(30)) { h.a.call.media.stats.packetsSent > 0 }
        #expect(sending)
        let selected = try #require(h.a.course.firstIndex(of: "selected"), "\(h.a.course)")
        let up = try #require(h.a.course.firstIndex { $0 == "ice connected" || $0 == "ice completed" },
                              "\(h.a.course)")
        #expect(selected < up, "\(h.a.course)")
        #expect(h.a.call.report.iceState == .connected || h.a.call.report.iceState == .completed)
        #expect(h.a.call.phase == .connected)
    }

    /// Consent expires on the sender's path while its media drains: the failure is seen
    /// (`ice failed`), acted on (a restart in a new epoch), and when the new epoch cannot connect
    /// either, the call ends `remote unreachable` — in that order.
    @Test func aTransportFailureWhileMediaDrainsRestartsThenEnds() async throws {
        let consent = ConsentConfiguration(interval: .seconds(1), jitter: 0.2, disconnectedAfter: .seconds(2),
                                           expiry: .seconds(3))
        let h = try await streaming(lifetime: CallLifetime(reconnectAttempts: 1, reconnectTimeout: .seconds(2)),
                                    consent: consent)
        await h.feed(h.a, .start)
        await h.feed(h.b, .start)
        let sending = await h.run(for: .seconds(30)) { h.a.call.media.stats.packetsSent > 0 }
        #expect(sending)
        let sentBefore = h.a.call.media.stats.packetsSent
        h.partitioned = true
        let ended = await h.run(for: .seconds(30)) { h.a.call.hasHungUp }
        #expect(ended, "\(h.a.course)")
        // Media was still being sent when the path was cut.
        #expect(h.a.call.media.stats.packetsSent > sentBefore)
        let failed = try #require(h.a.course.firstIndex(of: "ice failed"), "\(h.a.course)")
        let end = try #require(h.a.course.firstIndex { $0.hasPrefix("ended") }, "\(h.a.course)")
        #expect(failed < end, "\(h.a.course)")
        #expect(h.a.course[end].contains(PeerCall.remoteUnreachable), "\(h.a.course)")
        #expect(h.a.call.signaling.negotiator.counters.epochsStarted == 2)
        #expect(h.a.call.report.restartsTried == 1)
        // Media sent after consent expired was refused by the transport: said once, counted.
        #expect(h.a.call.report.unsentDatagrams > 0)
    }
}
