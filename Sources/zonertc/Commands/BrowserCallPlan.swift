import Browser
import Foundation
import Media
import Net
import ZoneCore

/// `zonertc call FILE --browser`: the store, a `zonertc peer` (alice, owner, offer creator) and headless
/// Chromium opening the call page as bob. Chromium is started by its own PID (the real binary behind
/// Debian's wrapper) with a fresh profile, and stopped by that PID; its verdict is read from the daemon's
/// `/call/report`, which the page posts once it has decoded the frames or given up.
///
/// - bob receives (default): OK when the browser decoded as many frames as alice sent, none dropped.
/// - `--browser-sends F.y4m`: Chromium's fake camera sends F, alice records it; OK when ffmpeg decodes the
///   recording without errors, it has at least 95 % of F's frames, and its PSNR against F is at least 30 dB.
///
/// A browser takes media only over DTLS-SRTP (RFC 8827 §6.5), which `zonertc peer` speaks only in a build
/// with the `WebRTC` trait: without it this plan stops at once, naming the trait and its packages, instead
/// of letting the call time out.
struct BrowserCallPlan {
    var file: String
    var browserPath: String?
    var browserSends: String?
    var push: String
    var timeout: Duration
    var keep: String?

    /// Whether this build's `zonertc peer` speaks DTLS-SRTP, which browsers require: only with the trait.
    static var peerSpeaksDTLS: Bool {
        #if WebRTC
        true
        #else
        false
        #endif
    }

    /// Why a build without the trait cannot take a browser's call.
    static let needsWebRTCBuild = "a browser sends and takes media only over DTLS-SRTP, which this build of "
        + "zonertc lacks: build with the WebRTC trait (apt-get install libssl-dev libsrtp2-dev; "
        + "swift build --traits WebRTC)"

    /// Checks that need no process: Chromium is there, the files fit. Nil when all is well, else why not.
    func problem() -> String? {
        do { _ = try HeadlessChromium.locate(explicit: browserPath) } catch { return error.description }
        do {
            let (format, frames) = try VideoFileSource.read(path: file)
            guard !frames.isEmpty else { return "\(file) holds no frames" }
            guard format.codec == .vp8 || format.codec == .h264 else {
                return "a browser decodes VP8 or H.264: \(file) is \(format.container.name) (\(format.codec))"
            }
        } catch {
            return "cannot stream \(file): \(error)"
        }
        if let browserSends {
            guard browserSends.hasSuffix(".y4m"), FileManager.default.isReadableFile(atPath: browserSends) else {
                return "--browser-sends needs a readable .y4m file (Chromium's fake camera plays Y4M): \(browserSends)"
            }
            guard ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
                .contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/ffmpeg") }) == true else {
                return "--browser-sends checks the recording with ffmpeg: install Debian's package `ffmpeg`"
            }
        }
        guard Self.peerSpeaksDTLS else { return Self.needsWebRTCBuild }
        return nil
    }

    func run() async -> Int32 {
        if let problem = problem() {
            Terminal.error("zonertc call --browser: \(problem)")
            return 1
        }
        let chromium = try! HeadlessChromium.locate(explicit: browserPath)
        let sent = try? VideoFileSource.read(path: file)
        let frames = sent?.frames.count ?? 0
        let directory = keep ?? NSTemporaryDirectory() + "zonertc-browser-call-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let group = ChildGroup()
        func finish(_ ok: Bool, _ text: String) async -> Int32 {
            print(text)
            if !ok {
                for child in group.children where !child.stderr.isEmpty {
                    Terminal.error("--- \(child.name) stderr (last lines):\n"
                                   + child.stderr.split(separator: "\n").suffix(30).joined(separator: "\n"))
                }
            }
            for child in group.children.reversed() { await child.stop() }
            if keep == nil { try? FileManager.default.removeItem(atPath: directory) }
            return ok ? 0 : 1
        }
        let interrupt = InterruptWatch { group.signal(SIGTERM) }
        defer { interrupt.cancel() }

        let store: ChildProcess
        do {
            store = try ChildProcess(name: "store", arguments: [
                "store", "serve", "--listen", "127.0.0.1:0", "--data", "\(directory)/store", "--push-profile", push,
            ], directory: directory)
            group.children.append(store)
        } catch { return await finish(false, "FAIL: cannot start the store daemon: \(error)") }
        guard let url = await store.storeURL(),
              let endpoint = try? Endpoint(parsing: String(url.dropFirst("http://".count)))
        else { return await finish(false, "FAIL: the store daemon did not start") }
        let room = CallWorkspace.newRoomName()
        let tokenFiles: [String: String]
        do {
            // As `zonertc call`: a kept directory may hold the store of an earlier run and its token files.
            tokenFiles = try await TokenFile.register(["alice", "bob"], storeURL: url, directory: directory,
                                                      newStore: keep == nil)
        } catch {
            return await finish(false, "FAIL: cannot register the users: \(error)")
        }
        let bobToken = ((try? String(contentsOfFile: tokenFiles["bob"]!, encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)

        var alice = ["peer", "--store", url, "--room", room, "--me", "alice", "--remote", "bob", "--owner",
                     "--token-file", tokenFiles["alice"]!, "--json",
                     "--connect-timeout", "\(timeout.components.seconds)s", "--send", file]
        if let browserSends, let camera = try? VideoFileSource.read(path: browserSends) {
            // The camera plays the file in a loop and never says BYE: alice's stream from it ends when she has
            // recorded as many frames as the file holds, and she hangs up once hers has been taken too, so the
            // recording is complete when it is checked. Both streams run in real time: twice the longer file
            // and 10 s for the DTLS handshake and the camera's start bound the wait, and a call that needs
            // more fails saying how far it got.
            let longest = max(Self.seconds(of: camera.frames, camera.format),
                              sent.map { Self.seconds(of: $0.frames, $0.format) } ?? 0)
            alice += ["--record", "\(directory)/alice-received", "--record-frames", "\(camera.frames.count)",
                      "--media-timeout", "\(Int((longest * 2000).rounded(.up)) + 10_000)ms"]
        }
        do {
            group.children.append(try ChildProcess(name: "alice", arguments: alice, directory: directory))
        } catch { return await finish(false, "FAIL: cannot start the peer: \(error)") }

        let page = "\(url)/call?room=\(room)&me=bob&remote=alice&report=1&frames=\(frames)"
            + "&timeout=\(timeout.components.seconds)&send=\(browserSends == nil ? 0 : 1)#token=\(bobToken)"
        do {
            group.children.append(try ChildProcess(
                name: "chromium", executable: chromium,
                arguments: HeadlessChromium.arguments(url: page, userDataDir: "\(directory)/chromium-profile",
                                                      fakeVideo: browserSends), directory: directory))
        } catch { return await finish(false, "FAIL: cannot start \(chromium): \(error)") }

        // The page reports once it has decoded the frames or given up (its own timeout); the daemon logs it.
        let end = ContinuousClock.now + timeout + .seconds(10)
        while !store.stderr.contains("call report"), ContinuousClock.now < end, store.process.isRunning {
            try? await Task.sleep(for: .milliseconds(50))
        }
        guard let report = Self.report(endpoint: endpoint, room: room, user: "bob", token: bobToken) else {
            return await finish(false, "FAIL: the browser reported nothing within \(timeout)")
        }
        if let verdict = BrowserCallVerdict.fromReport(report, framesSent: frames, browserSends: browserSends != nil) {
            return await finish(verdict.ok, verdict.text)
        }
        guard let browserSends else { preconditionFailure("the report decides a call the browser receives") }
        let aliceChild = group.children.first { $0.name == "alice" }
        let aliceStatus = await aliceChild?.wait(timeout: timeout)
        let aliceReason = aliceChild.flatMap { PeerSummary(lastLineOf: $0.stdout)?.reason }
        if let failure = BrowserCallVerdict.aliceExit(status: aliceStatus, reason: aliceReason, waited: timeout) {
            return await finish(failure.ok, failure.text)
        }
        let verdict = BrowserRecordingCheck.check("\(directory)/alice-received", source: browserSends,
                                                  scratch: directory)
        return await finish(verdict.ok, verdict.text)
    }

    /// How long `frames` play at their timestamps' pace: as many frame intervals as frames.
    static func seconds(of frames: [VideoFrame], _ format: VideoStreamFormat) -> Double {
        guard let first = frames.first?.pts, let last = frames.last?.pts, format.timebase.denominator > 0 else {
            return 0
        }
        let interval = frames.count > 1 ? Double(last - first) / Double(frames.count - 1) : 0
        let ticks = Double(last - first) + interval
        return ticks * Double(format.timebase.numerator) / Double(format.timebase.denominator)
    }

    /// The page's report, read with bob's token (`GET /call/report`).
    static func report(endpoint: Endpoint, room: String, user: String, token: String) -> [String: Any]? {
        guard let fd = try? TCPSocket.connectBlocking(to: endpoint) else { return nil }
        defer { close(fd) }
        let request = Array(("GET /call/report?room=\(room)&me=\(user) HTTP/1.1\r\nHost: zonertc\r\n"
                             + "Authorization: Bearer \(token)\r\nConnection: close\r\n\r\n").utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        TCPSocket.setReceiveTimeout(fd, milliseconds: 5000)
        var reply: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65536)
        while reply.count < 4 << 20 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply += buffer[0..<n]
        }
        let text = String(decoding: reply, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let body = text.range(of: "\r\n\r\n") else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text[body.upperBound...].utf8)) as? [String: Any]
    }
}
