#if WebRTC
import Browser
import Foundation
import Glibc
import Testing
import TestSupport

/// Issue 15: headless Chromium and `zonertc peer` (DTLS-SRTP, the browsers' SDP dialect) call each other
/// through a real `zonertc store serve`, media both ways and either side the offer creator. The page
/// reports to the daemon (`/call/report`), the peer prints its JSON summary; the test waits on their output
/// (no sleeps), every run is bounded (pages give up after 40 s) and every process is stopped by its PID.
/// Without Chromium the suite is skipped; under ZONERTC_CI=1 it fails.
@Suite("A browser and zonertc peer call each other", .serialized,
       .enabled(if: ExternalProgram.underCI || (try? HeadlessChromium.locate()) != nil, "Chromium is not installed"))
struct BrowserPeerCallTests {
    typealias BrowserCall = BrowserCallTests.BrowserCall
    static let vp8 = MediaCommandTests.fixture("vp8-320x240-60.ivf")

    /// `zonertc peer` as `me` in the call's room (its token in a file of its own), stopped with the call.
    static func peer(_ call: BrowserCall, me: String, remote: String, owner: Bool, _ extra: [String]) throws
        -> ProcessWatch {
        let tokenFile = NSTemporaryDirectory() + "zonertc-peer-token-\(UUID().uuidString)"
        // Mode 0600: the peer refuses a token file others may read.
        guard FileManager.default.createFile(atPath: tokenFile, contents: Data(call.tokens[me]!.utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw SpawnFailure("cannot write \(tokenFile)")
        }
        call.profiles.append(tokenFile)
        let peer = try spawnWatched([ZonertcProcess.binary.path, "peer", "--store", "http://\(call.endpoint)",
                                     "--room", call.room, "--me", me, "--remote", remote, "--token-file", tokenFile,
                                     "--json", "--connect-timeout", "30s", "--media-security", "dtls-srtp"]
                                    + (owner ? ["--owner"] : []) + extra)
        call.peers.append(peer)
        return peer
    }

    /// The peer's JSON summary once it has exited (within 40 s: it gives up connecting after 30 s).
    static func summary(_ peer: ProcessWatch) async throws -> [String: Any] {
        let status = try await offPool { peer.wait(within: .seconds(40)) }
        #expect(status == 0, "the peer: \(peer.stdout)\n\(peer.stderr.suffix(3000))")
        #expect(peer.crashReport == nil, "the peer crashed: \(peer.crashReport ?? "")")
        let line = peer.stdout.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init) ?? "{}"
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    static func media(_ summary: [String: Any], _ key: String) -> Int {
        ((summary["media"] as? [String: Any])?[key] as? NSNumber)?.intValue ?? -1
    }

    /// The browser decoded every frame the peer sent, dropped none; the peer secured media with DTLS-SRTP.
    func browserReceives(room: String, peer: String, browser: String) async throws {
        let call = try BrowserCall(room: room)
        defer { call.stop() }
        try await call.register(peer, browser)
        let sender = try Self.peer(call, me: peer, remote: browser, owner: true, ["--send", Self.vp8])
        try call.open(me: browser, remote: peer, owner: false, query: "&frames=60&timeout=40&send=0")
        let reports = try await offPool { try call.reports(of: [browser]) }
        let report = reports[browser]
        #expect(report?["ok"] as? Bool == true, "\(browser): \(report?["reason"] ?? "no report")")
        #expect(BrowserCallTests.number(report, "media", "framesDecoded") == 60)
        #expect(BrowserCallTests.number(report, "media", "framesDropped") == 0)
        #expect(BrowserCallTests.number(report, "call", "resets") == 0)
        #expect(BrowserCallTests.number(report, "inbox", "malformed") == 0)
        #expect(report?["offerCreator"] as? Bool == (browser < peer))
        let summary = try await Self.summary(sender)
        #expect(summary["outcome"] as? String == "completed", "\(summary)")
        #expect(summary["mediaSecurity"] as? String == "dtls-srtp")
        #expect(Self.media(summary, "framesSent") == 60, "\(summary)")
        #expect(summary["malformedRecords"] as? Int ?? 0 == 0)
    }

    @Test("the peer offers (alice < bob, alice owns the room): the browser decodes all 60 frames")
    func peerOffersBrowserReceives() async throws {
        try await browserReceives(room: "room_pbr0001a", peer: "alice", browser: "bob")
    }

    @Test("the browser offers (amy < zed, the peer zed owns the room): the browser decodes all 60 frames")
    func browserOffersBrowserReceives() async throws {
        try await browserReceives(room: "room_pbr0002a", peer: "zed", browser: "amy")
    }

    /// The peer's goodbye is in the records (docs/PROTOCOL.md §7): hanging up, it deletes its envelopes and
    /// chunks. The page wants more frames than the peer sends, so only noticing that goodbye ends its call before
    /// its own timeout: it closes its RTCPeerConnection, stops its camera and reports why the call ended. The
    /// peer's description that leaves is its offer when it offered (alice < bob), else its answer (amy < zed).
    @Test("the peer hangs up first: the page closes its connection, stops its camera and reports the call ended",
          arguments: [("room_pbr0004a", "alice", "bob"), ("room_pbr0005a", "zed", "amy")])
    func peerHangsUpFirst(room: String, peer: String, browser: String) async throws {
        let call = try BrowserCall(room: room)
        defer { call.stop() }
        try await call.register(peer, browser)
        let sender = try Self.peer(call, me: peer, remote: browser, owner: true, ["--send", Self.vp8])
        try call.open(me: browser, remote: peer, owner: false, query: "&frames=1000&timeout=30")
        let summary = try await Self.summary(sender)
        #expect(summary["outcome"] as? String == "completed", "\(summary)")
        let reports = try await offPool { try call.reports(of: [browser]) }
        let report = reports[browser]
        let reason = report?["reason"] as? String ?? "no report"
        let ended = report?["ended"] as? [String: Any]
        let description = peer < browser ? "offer" : "answer"
        #expect(report?["ok"] as? Bool == false)
        #expect(reason.hasPrefix("\(peer) hung up (its \(description) of epoch "), "\(reason)")
        #expect(ended?["by"] as? String == peer, "\(reason)")
        #expect((report?["status"] as? String)?.hasPrefix("ENDED: \(peer) hung up") == true,
                "\(report?["status"] ?? "")")
        #expect(report?["connectionState"] as? String == "closed")
        #expect(ended?["localTracks"] as? [String] == ["ended"], "\(ended ?? [:])")
        // What had arrived was decoded before the connection closed.
        #expect(BrowserCallTests.number(report, "media", "framesDecoded") == 60)
    }

    /// A Y4M for the browser's fake camera: ffmpeg's moving test pattern, 320×240, 60 frames at 30 fps.
    static func cameraFile() throws -> String {
        let ffmpeg = try ExternalProgram.require("ffmpeg", package: "ffmpeg")
        let path = NSTemporaryDirectory() + "zonertc-camera-\(UUID().uuidString).y4m"
        let child = try spawnWatched([ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                      "testsrc=size=320x240:rate=30", "-frames:v", "60", "-pix_fmt", "yuv420p",
                                      "-y", path])
        guard child.wait(within: .seconds(30)) == 0 else {
            if child.exitStatus == nil { kill(child.pid, SIGKILL); _ = child.wait(within: .seconds(5)) }
            throw SpawnFailure("ffmpeg made no camera file: \(child.stderr)")
        }
        return path
    }

    @Test("the browser offers and sends (amy < zed): zed records it, ffmpeg decodes it, PSNR ≥ 30 dB")
    func browserOffersBrowserSends() async throws {
        let call = try BrowserCall(room: "room_pbr0003a")
        defer { call.stop() }
        let camera = try Self.cameraFile()
        let scratch = NSTemporaryDirectory() + "zonertc-browser-recording-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        call.profiles += [camera, scratch]
        try await call.register("zed", "amy")
        // The camera loops the file and never says BYE: one pass of its 60 frames ends the stream.
        let recorder = try Self.peer(call, me: "zed", remote: "amy", owner: true,
                                     ["--record", "\(scratch)/zed-received", "--record-frames", "60",
                                      "--media-timeout", "20s"])
        try call.open(me: "amy", remote: "zed", owner: false, query: "&frames=60&timeout=40", fakeVideo: camera)
        let summary = try await Self.summary(recorder)
        #expect(summary["outcome"] as? String == "completed", "\(summary)")
        #expect(summary["mediaSecurity"] as? String == "dtls-srtp")
        #expect(Self.media(summary, "framesReceived") == 60, "\(summary)")
        let verdict = BrowserRecordingCheck.check("\(scratch)/zed-received", source: camera, scratch: scratch)
        #expect(verdict.ok, "\(verdict.text)")
        let reports = try await offPool { try call.reports(of: ["amy"]) }
        #expect(reports["amy"]?["ok"] as? Bool == true, "amy: \(reports["amy"]?["reason"] ?? "no report")")
        #expect(reports["amy"]?["offerCreator"] as? Bool == true)
        #expect(BrowserCallTests.number(reports["amy"], "media", "framesSent") >= 60)
    }

    @Test("zonertc call --browser (the peer offers): the browser decodes 60 of 60; --browser-sends passes ffmpeg")
    func callCommand() async throws {
        let camera = try Self.cameraFile()
        defer { try? FileManager.default.removeItem(atPath: camera) }
        for extra in [[], ["--browser-sends", camera]] {
            let child = try spawnWatched([ZonertcProcess.binary.path, "call", Self.vp8, "--browser",
                                          "--timeout", "30s"] + extra)
            let status = try await offPool { child.wait(within: .seconds(58)) }
            if status == nil {
                // SIGTERM: the command stops the daemon, the peer and Chromium it started, by their PIDs.
                kill(child.pid, SIGTERM)
                if child.wait(within: .seconds(10)) == nil {
                    kill(child.pid, SIGKILL)
                    _ = child.wait(within: .seconds(5))
                }
            }
            #expect(status == 0, "\(extra): \(child.stdout)\n\(child.stderr.suffix(3000))")
            #expect(child.crashReport == nil, "\(extra): zonertc call crashed: \(child.crashReport ?? "")")
            let expected = extra.isEmpty ? "OK: the browser decoded 60 of 60 frames sent, 0 dropped"
                : "OK: alice recorded"
            #expect(child.stdout.contains(expected), "\(child.stdout)")
        }
    }
}
#endif
