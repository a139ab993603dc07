import Browser
import Foundation
import Testing

/// `zonertc call FILE --browser`: what is checked before anything starts — its flags, a missing Chromium
/// named with its package, files a browser cannot use, and (without the WebRTC trait) a clear refusal
/// instead of a call that times out. The calls themselves: BrowserPeerCallTests.
@Suite("zonertc call --browser")
struct BrowserCallCommandTests {
    static let vp8 = MediaCommandTests.fixture("vp8-320x240-60.ivf")

    @Test("no Chromium in PATH: the error names the package to install")
    func noChromium() throws {
        let out = try ZonertcProcess.run(["call", Self.vp8, "--browser"], environment: ["PATH": "/nonexistent"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("apt-get install chromium"), "\(out.stderr)")
        #expect(out.stderr.contains("--browser-path"))
    }

    @Test("--browser-path that is not a program is refused")
    func badBrowserPath() throws {
        let out = try ZonertcProcess.run(["call", Self.vp8, "--browser", "--browser-path", "/nonexistent/chrome"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("/nonexistent/chrome is not an executable file"), "\(out.stderr)")
    }

    @Test("browser options need --browser; other call options do not go with it")
    func flagParsing() throws {
        let sends = try ZonertcProcess.run(["call", Self.vp8, "--browser-sends", "x.y4m"])
        #expect(sends.status == 2 && sends.stderr.contains("--browser-sends needs --browser"), "\(sends.stderr)")
        let path = try ZonertcProcess.run(["call", Self.vp8, "--browser-path", "/usr/bin/true"])
        #expect(path.status == 2 && path.stderr.contains("--browser-path needs --browser"), "\(path.stderr)")
        for extra in [["--both-ways"], ["--relay-only"], ["--impair", "loss=0.1"], ["--json"]] {
            let out = try ZonertcProcess.run(["call", Self.vp8, "--browser"] + extra)
            #expect(out.status == 2 && out.stderr.contains("\(extra[0]) does not go with --browser"), "\(out.stderr)")
        }
        let help = try ZonertcProcess.run(["help", "call"])
        #expect(help.stdout.contains("--browser-sends FILE.y4m"), "\(help.stdout)\(help.stderr)")
    }

    @Test("files a browser cannot use: raw Y4M to send, a non-Y4M for its camera")
    func unusableFiles() throws {
        // A stand-in browser: the file checks come after finding one.
        let fake = "/usr/bin/true"
        let y4m = try ZonertcProcess.run(["call", MediaCommandTests.fixture("testsrc-32x24-5.y4m"), "--browser",
                                          "--browser-path", fake])
        #expect(y4m.status == 1 && y4m.stderr.contains("a browser decodes VP8 or H.264"), "\(y4m.stderr)")
        let camera = try ZonertcProcess.run(["call", Self.vp8, "--browser", "--browser-path", fake,
                                             "--browser-sends", Self.vp8])
        #expect(camera.status == 1 && camera.stderr.contains("needs a readable .y4m file"), "\(camera.stderr)")
    }

    #if !WebRTC
    @Test("a build without the WebRTC trait has no DTLS-SRTP: the command says so, naming the trait and packages")
    func needsDTLS() throws {
        let out = try ZonertcProcess.run(["call", Self.vp8, "--browser", "--browser-path", "/usr/bin/true"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("build with the WebRTC trait"), "\(out.stderr)")
        #expect(out.stderr.contains("libssl-dev libsrtp2-dev"), "\(out.stderr)")
    }
    #endif

    @Test("after the page reports: alice exiting non-zero or not at all fails the call, with her reason")
    func aliceFailureVerdict() {
        let failed = BrowserCallVerdict.aliceExit(status: 1, reason: "nothing received to record", waited: .seconds(30))
        #expect(failed?.ok == false)
        #expect(failed?.text == "FAIL: alice exited with status 1 after recording: nothing received to record")
        // 128 + SIGSEGV: crashed on her way out, without a summary.
        #expect(BrowserCallVerdict.aliceExit(status: 139, reason: nil, waited: .seconds(30))?.text
                == "FAIL: alice exited with status 139 after recording")
        #expect(BrowserCallVerdict.aliceExit(status: nil, reason: nil, waited: .seconds(30))?.text
                == "FAIL: alice did not hang up within 30.0 seconds of the browser's report")
        #expect(BrowserCallVerdict.aliceExit(status: 0, reason: nil, waited: .seconds(30)) == nil)
    }

    @Test("the page's report: every frame decoded passes; fewer, drops or the page's own failure fail")
    func reportVerdict() {
        func report(ok: Bool, decoded: Int, dropped: Int = 0, reason: String? = nil) -> [String: Any] {
            ["ok": ok, "reason": reason as Any, "media": ["framesDecoded": decoded, "framesDropped": dropped,
                                                         "firstFrameMs": 412]]
        }
        let all = BrowserCallVerdict.fromReport(report(ok: true, decoded: 60), framesSent: 60, browserSends: false)
        #expect(all?.ok == true)
        #expect(all?.text == "OK: the browser decoded 60 of 60 frames sent, 0 dropped, first frame 412 ms after the "
                + "page started")
        #expect(BrowserCallVerdict.fromReport(report(ok: true, decoded: 60, dropped: 1), framesSent: 60,
                                              browserSends: false)?.ok == false)
        let ended = BrowserCallVerdict.fromReport(report(ok: false, decoded: 12, reason: "alice hung up"),
                                                  framesSent: 60, browserSends: true)
        #expect(ended?.ok == false)
        #expect(ended?.text == "FAIL: the browser says: alice hung up (first frame 412 ms after the page started)")
        // The browser sent and the page is content: alice's exit and recording decide.
        #expect(BrowserCallVerdict.fromReport(report(ok: true, decoded: 60), framesSent: 60, browserSends: true) == nil)
    }

    @Test("the Debian wrapper script is replaced by the binary it starts; flags for a loopback call")
    func chromiumLookup() throws {
        let args = HeadlessChromium.arguments(url: "http://127.0.0.1:1/call", userDataDir: "/tmp/p",
                                              fakeVideo: "/v.y4m")
        #expect(args.contains("--allow-loopback-in-peer-connection"))
        #expect(args.contains("--use-file-for-fake-video-capture=/v.y4m"))
        #expect(args.contains("--user-data-dir=/tmp/p") && args.last == "http://127.0.0.1:1/call")
        if FileManager.default.isExecutableFile(atPath: "/usr/lib/chromium/chromium") {
            #expect(try HeadlessChromium.locate(path: "/usr/bin") == "/usr/lib/chromium/chromium")
        }
        #expect(throws: HeadlessChromium.NotFound.self) { try HeadlessChromium.locate(path: "/nonexistent") }
    }
}
