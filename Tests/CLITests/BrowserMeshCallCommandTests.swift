import Browser
import Foundation
import Testing
import TestSupport

/// `zonertc call FILE --browser --peers 3`: the group-call page in headless Chromium and two `zonertc peer`s in
/// one room. The verdict's lines are checked without a browser; the call itself once, in real time (the file
/// is 2 s of video), waited for on the command's exit. Without Chromium the call is skipped; under ZONERTC_CI=1
/// it fails.
@Suite("zonertc call --browser --peers N")
struct BrowserMeshCallCommandTests {
    static let vp8 = MediaCommandTests.fixture("vp8-320x240-60.ivf")

    static func report(ok: Bool = true, reason: String? = nil, _ legs: [String: (decoded: Int, dropped: Int)])
        -> [String: Any] {
        var members: [String: Any] = [:]
        for (user, leg) in legs {
            members[user] = ["remote": user, "media": ["framesDecoded": leg.decoded, "framesDropped": leg.dropped,
                                                       "firstFrameMs": 900]]
        }
        return ["ok": ok, "reason": reason as Any, "members": members]
    }

    @Test("the page decoded every frame of each peer and each peer received the camera's frames: OK")
    func allStreams() {
        let peers = [BrowserMeshVerdict.PeerLeg(name: "alice", framesSent: 60, framesReceived: 60),
                     BrowserMeshVerdict.PeerLeg(name: "bob", framesSent: 60, framesReceived: 60)]
        let verdict = BrowserMeshVerdict.check(report: Self.report(["alice": (60, 0), "bob": (60, 0)]),
                                               page: "carol", peers: peers, pageFrames: 60)
        #expect(verdict.ok)
        #expect(verdict.streams.count == 4)
        #expect(verdict.text == "OK: the page decoded every frame (60 from alice, 60 from bob), none dropped; "
                + "each peer received its 60 camera frames")
    }

    @Test("short streams, drops, a missing leg or the page's own failure fail, naming the streams")
    func shortfalls() {
        let peers = [BrowserMeshVerdict.PeerLeg(name: "alice", framesSent: 60, framesReceived: 41),
                     BrowserMeshVerdict.PeerLeg(name: "bob", framesSent: 60, framesReceived: 60)]
        let short = BrowserMeshVerdict.check(report: Self.report(["alice": (60, 0), "bob": (59, 1)]),
                                             page: "carol", peers: peers, pageFrames: 60)
        #expect(!short.ok)
        #expect(short.text == "FAIL: 2 of 4 streams with the page fall short: carol→alice 41/60, "
                + "bob→carol 59/60 (1 dropped)")
        // No leg with bob at the page at all, and bob has none with the page either.
        let noLeg = [peers[0], BrowserMeshVerdict.PeerLeg(name: "bob", framesSent: nil, framesReceived: nil)]
        let missing = BrowserMeshVerdict.check(report: Self.report(["alice": (60, 0)]), page: "carol", peers: noLeg,
                                               pageFrames: nil)
        #expect(!missing.ok && missing.text.contains("bob→carol 0/0"), "\(missing.text)")
        let failed = BrowserMeshVerdict.check(report: Self.report(ok: false, reason: "not done within 60 s", [:]),
                                              page: "carol", peers: peers, pageFrames: 60)
        #expect(!failed.ok && failed.text == "FAIL: the page says: not done within 60 s")
        #expect(BrowserMeshVerdict.check(report: nil, page: "carol", peers: peers, pageFrames: 60).text
                == "FAIL: the page reported nothing")
    }

    @Test("options that do not go with a browser group call are refused (exit 2)")
    func flagParsing() throws {
        for extra in [["--browser-sends", "x.y4m"], ["--record", "/tmp/x"], ["--sync", "push"], ["--pace", "max"],
                      ["--turn", "u:p@127.0.0.1:3478"]] {
            let out = try ZonertcProcess.run(["call", Self.vp8, "--browser", "--peers", "3"] + extra)
            #expect(out.status == 2 && out.stderr.contains("\(extra[0]) does not go with --browser --peers 3"),
                    "\(out.stderr)")
        }
    }

    #if WebRTC
    struct Report: Decodable {
        struct PageStream: Decodable { var from: String; var to: String; var expected: Int; var got: Int; var ok: Bool }
        struct Stream: Decodable { var from: String; var to: String; var identical: Bool; var framesReceived: Int }
        struct Verdict: Decodable { var ok: Bool; var text: String }
        var page: String
        var pageStreams: [PageStream]
        var streams: [Stream]
        var verdict: Verdict
    }

    @Test("the page and two peers: every frame of each peer decoded, the camera received by both, peers identical",
          .enabled(if: ExternalProgram.underCI || (try? HeadlessChromium.locate()) != nil, "Chromium is not installed"))
    func pageAndTwoPeers() throws {
        let run = try ZonertcProcess.run(["call", Self.vp8, "--browser", "--peers", "3", "--json", "--timeout", "40s"],
                                         limit: .seconds(90))
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(6000))")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.stdout.utf8))
        #expect(report.verdict.ok, "\(report.verdict.text)")
        #expect(report.page == "carol")
        let pageStreams = Set(report.pageStreams.filter(\.ok).map { "\($0.from)>\($0.to)" })
        #expect(pageStreams == ["alice>carol", "bob>carol", "carol>alice", "carol>bob"], "\(report.pageStreams)")
        #expect(report.pageStreams.allSatisfy { $0.expected == 60 && $0.got == 60 })
        #expect(report.streams.count == 2 && report.streams.allSatisfy { $0.identical && $0.framesReceived == 60 })
    }
    #endif
}
