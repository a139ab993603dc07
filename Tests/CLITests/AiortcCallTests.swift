// Full calls between `zonertc peer` and aiortc (issue 14): real processes, a `zonertc store
// serve --memory` daemon, Tests/Interop/aiortc_zone_peer.py running aiortc's RTCPeerConnection,
// ICE on loopback, DTLS-SRTP, VP8 and H.264, either side making the offer (the lower user ID).
// Only with the `WebRTC` trait: without it our peer speaks plain RTP, which aiortc refuses.
#if WebRTC
import Foundation
import Testing
import TestSupport
import ZoneCore

@Suite("zonertc and aiortc in one call", .serialized)
struct AiortcCallTests {
    struct Case: CustomStringConvertible, Sendable {
        let codec: String
        let fixture: String
        let container: String
        let zonertcOffers: Bool

        /// The lower user ID makes the offer (docs/SIGNALING.md §1); zonertc always owns the room.
        var zonertcID: String { zonertcOffers ? "_a_zonertc" : "_z_zonertc" }
        var aiortcID: String { zonertcOffers ? "_b_aiortc" : "_a_aiortc" }
        var description: String { "\(codec), \(zonertcOffers ? "zonertc" : "aiortc") offers" }
    }

    static let cases: [Case] = [true, false].flatMap { zonertcOffers in
        [Case(codec: "vp8", fixture: "vp8-320x240-60.ivf", container: "ivf", zonertcOffers: zonertcOffers),
         Case(codec: "h264", fixture: "h264-320x240-60.h264", container: "h264", zonertcOffers: zonertcOffers)]
    }

    /// Frames in each fixture.
    static let fixtureFrames = 60

    /// aiortc, python3 and ffmpeg are there; a failure under ZONERTC_CI=1, a skip message elsewhere.
    static func programsAvailable() async throws -> Bool {
        guard try await AiortcSignalingTests.aiortcAvailable() else { return false }
        if ExternalProgram.runnable("ffmpeg") { return true }
        print("skipped: ffmpeg is not installed (apt-get install ffmpeg)")
        return false
    }

    static func ffmpeg(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(URL(fileURLWithPath: try ExternalProgram.require("ffmpeg", package: "ffmpeg")),
                         ["-hide_banner", "-nostdin"] + arguments)
    }

    /// MD5 of each frame ffmpeg decodes from `path` (its YUV planes, packed: `-f framemd5`).
    static func decodedFrameMD5(_ path: String) throws -> [String] {
        let ffmpeg = try Self.ffmpeg(["-loglevel", "error", "-i", path, "-f", "framemd5", "-"])
        #expect(ffmpeg.wait(seconds: 30) == 0, "ffmpeg: \(ffmpeg.stderr)")
        return ffmpeg.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The aiortc participant, started once `peer` (the owner) has shared the room: nothing would
    /// tell the helper that the share appeared.
    static func helper(_ daemon: DaemonProcess, _ call: Case, after peer: ChildProcess,
                       _ arguments: [String]) throws -> ProcessWatch {
        guard peer.waitForStderr("room room_aiortc21 ready", seconds: 20) else {
            throw SpawnFailure("the peer set up no room within 20 s: \(peer.stderr.suffix(2000))")
        }
        // Default signal handling: spawned from a Dispatch thread it would inherit a mask with SIGTERM blocked,
        // and a helper told to stop would run on to its --timeout (15 s).
        return try spawnWatched([
            try ExternalProgram.require("python3", package: "python3"), AiortcSignalingTests.script,
            "--store", "http://\(daemon.endpoint)", "--room", "room_aiortc21", "--me", call.aiortcID,
            "--remote", call.zonertcID, "--codec", call.codec, "--timeout", "15",
        ] + arguments, defaultSignals: true)
    }

    static func peer(_ daemon: DaemonProcess, _ call: Case, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.zonertc([
            "peer", "--store", "http://\(daemon.endpoint)", "--room", "room_aiortc21", "--me", call.zonertcID,
            "--remote", call.aiortcID, "--owner", "--media-security", "dtls-srtp", "--connect-timeout", "20s",
            "--json",
        ] + arguments)
    }

    /// The peer's `--json` summary (its last line).
    static func summary(_ peer: ChildProcess) -> [String: Any] {
        let line = peer.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    static func finish(_ helper: ProcessWatch) async throws -> Int32? {
        let status = try await offPool { helper.wait(within: .seconds(50)) }
        if status == nil { kill(helper.pid, SIGKILL) }
        return status
    }

    @Test("zonertc sends the fixture, aiortc decodes it: the YUV of every frame equals ffmpeg's decode",
          arguments: cases)
    func zonertcSendsAiortcDecodes(_ call: Case) async throws {
        guard try await Self.programsAvailable() else { return }
        let fixture = MediaCommandTests.fixture(call.fixture)
        let expected = try Self.decodedFrameMD5(fixture)
        #expect(expected.count == Self.fixtureFrames)
        // Stock aiortc 1.16 decodes a frame once a packet of the next one arrives, so the last
        // frame of a stream is never decoded: we expect N-1 (the helper does not patch aiortc).
        let decodable = Self.fixtureFrames - 1

        let daemon = try DaemonProcess(arguments: ["--memory"])
        let peer = try Self.peer(daemon, call, ["--send", fixture])
        let helper = try Self.helper(daemon, call, after: peer,
                                     ["--direction", "recvonly", "--frames", "\(decodable)", "--duration", "10"])
        defer { if helper.wait(within: .zero) == nil { kill(helper.pid, SIGKILL) } }

        let status = try await Self.finish(helper)
        #expect(status == 0, "helper: \(helper.stdout) \(helper.stderr.suffix(3000))")
        let peerStatus = try await offPool { peer.wait(seconds: 30) }
        #expect(peerStatus == 0, "peer: \(peer.stdout) \(peer.stderr.suffix(2000))")

        let events = AiortcSignalingTests.events(helper)
        let frames = events.filter { $0["type"] as? String == "frame" }
        #expect(frames.count == decodable)
        #expect(frames.allSatisfy { $0["width"] as? Int == 320 && $0["height"] as? Int == 240 })
        let decoded = frames.compactMap { $0["md5"] as? String }
        #expect(decoded == Array(expected.prefix(decodable)), "aiortc's YUV differs from ffmpeg's")
        #expect(events.contains { $0["type"] as? String == "connection" && $0["state"] as? String == "connected" })

        let media = Self.summary(peer)["media"] as? [String: Any]
        #expect(media?["framesSent"] as? Int == Self.fixtureFrames)
    }

    @Test("aiortc sends the fixture with its MediaPlayer, zonertc records it: ffmpeg decodes it, PSNR ≥ 30 dB",
          arguments: cases)
    func aiortcSendsZonertcRecords(_ call: Case) async throws {
        guard try await Self.programsAvailable() else { return }
        let fixture = MediaCommandTests.fixture(call.fixture)
        let recording = MediaCommandTests.temporary("aiortc.\(call.container)")
        defer { try? FileManager.default.removeItem(atPath: recording) }

        // aiortc's MediaPlayer skips frames without a pts, so an Annex B file (no timestamps) plays
        // nothing: it gets the same bitstream in Matroska, at the fixture's 30 frames a second.
        var played = fixture
        if call.container == "h264" {
            played = MediaCommandTests.temporary("aiortc-source.mkv")
            let remux = try Self.ffmpeg(["-loglevel", "error", "-framerate", "30", "-i", fixture, "-c", "copy",
                                         played])
            #expect(remux.wait(seconds: 30) == 0, "ffmpeg: \(remux.stderr)")
        }
        defer { if played != fixture { try? FileManager.default.removeItem(atPath: played) } }

        let daemon = try DaemonProcess(arguments: ["--memory"])
        // The peer hangs up 6 s after connecting: the 2 s file played in real time, and margin.
        let peer = try Self.peer(daemon, call, ["--record", recording, "--duration", "6s"])
        let helper = try Self.helper(daemon, call, after: peer,
                                     ["--direction", "sendonly", "--play", played, "--duration", "3"])
        defer { if helper.wait(within: .zero) == nil { kill(helper.pid, SIGKILL) } }

        let status = try await Self.finish(helper)
        #expect(status == 0, "helper: \(helper.stdout) \(helper.stderr.suffix(3000))")
        let peerStatus = try await offPool { peer.wait(seconds: 30) }
        #expect(peerStatus == 0, "peer: \(peer.stdout) \(peer.stderr.suffix(2000))")

        // ffmpeg decodes the whole recording without a complaint.
        let decode = try Self.ffmpeg(["-loglevel", "error", "-i", recording, "-f", "framemd5", "-"])
        #expect(decode.wait(seconds: 30) == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")
        let frames = decode.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        #expect(frames * 100 >= Self.fixtureFrames * 95, "\(frames) of \(Self.fixtureFrames) frames recorded")

        // aiortc decoded the file and encoded it again: compared by PSNR, frames matched by time.
        let psnr = try Self.ffmpeg(["-i", recording, "-i", fixture, "-lavfi", "psnr", "-f", "null", "-"])
        #expect(psnr.wait(seconds: 30) == 0, "ffmpeg psnr: \(psnr.stderr.suffix(2000))")
        let average = psnr.stderr.range(of: #"average:[0-9.]+"#, options: .regularExpression)
            .flatMap { Double(psnr.stderr[$0].dropFirst("average:".count)) }
        #expect((average ?? 0) >= 30, "PSNR \(String(describing: average)) dB")
        print("aiortc → zonertc \(call): \(frames) frames recorded, PSNR \(average ?? 0) dB")
    }

    struct Misbehaviour: CustomStringConvertible, Sendable {
        let flag: String
        let reason: String
        let zonertcOffers: Bool
        var description: String { "\(flag), \(zonertcOffers ? "zonertc" : "aiortc") offers" }
    }

    static let misbehaviours: [Misbehaviour] = [true, false].flatMap { zonertcOffers in
        [Misbehaviour(flag: "wrong-fingerprint", reason: "is not the signaled sha-256", zonertcOffers: zonertcOffers),
         Misbehaviour(flag: "silent-dtls", reason: "no handshake within 3000", zonertcOffers: zonertcOffers)]
    }

    @Test("a remote whose certificate is not its fingerprint, or that never does DTLS: the call fails, with the reason",
          arguments: misbehaviours)
    func badRemoteFailsTheCall(_ bad: Misbehaviour) async throws {
        guard try await Self.programsAvailable() else { return }
        let call = Case(codec: "vp8", fixture: "vp8-320x240-60.ivf", container: "ivf",
                        zonertcOffers: bad.zonertcOffers)
        let daemon = try DaemonProcess(arguments: ["--memory"])
        let watch = Stopwatch()
        // A remote that never does DTLS is given up after --dtls-timeout: 3 s here instead of the default 10 (the
        // wrong certificate fails as soon as it arrives, whatever the bound).
        let bound = bad.flag == "silent-dtls" ? ["--dtls-timeout", "3s"] : []
        let peer = try Self.peer(daemon, call, ["--send", MediaCommandTests.fixture(call.fixture)] + bound)
        let helper = try Self.helper(daemon, call, after: peer, ["--direction", "recvonly", "--frames", "59",
                                                                 "--duration", "5", "--misbehave", bad.flag])
        defer { if helper.wait(within: .zero) == nil { kill(helper.pid, SIGKILL) } }

        // The handshake bound is 3 s after ICE selects a pair: the peer ends well within 30 s.
        let peerStatus = try await offPool { peer.wait(seconds: 30) }
        let elapsed = watch.elapsed
        #expect(peerStatus == 1, "peer: \(peer.stdout) \(peer.stderr.suffix(2000))")
        #expect(elapsed < .seconds(25))
        let summary = Self.summary(peer)
        #expect(summary["outcome"] as? String == "failed")
        let reason = summary["reason"] as? String ?? ""
        #expect(reason.hasPrefix("DTLS: ") && reason.contains(bad.reason), "reason: \(reason)")
        #expect(summary["iceConnectedMs"] != nil && summary["mediaSecuredMs"] == nil)
        let media = summary["media"] as? [String: Any]
        #expect(media?["packetsSent"] as? Int == 0 && media?["framesSent"] as? Int == 0)
        kill(helper.pid, SIGTERM)
        _ = try await Self.finish(helper)
        #expect(!AiortcSignalingTests.events(helper).contains { $0["type"] as? String == "frame" })
        print("bad remote (\(bad)): failed after \(elapsed): \(reason.prefix(80))")
    }
}
#endif
