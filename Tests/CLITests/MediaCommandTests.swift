import Foundation
import TestSupport
import Media
import Testing
import ZoneCore

/// `zonertc media send` and `zonertc media receive` as real processes on loopback, with each
/// other and with ffmpeg, and what they say about bad input. Every process is bounded by a
/// timeout and killed if it overstays.
@Suite("zonertc media", .serialized)
struct MediaCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    static func temporary(_ name: String) -> String {
        NSTemporaryDirectory() + "zonertc-media-cli-\(UUID().uuidString)-\(name)"
    }

    static func json(_ text: String) -> [String: Any] {
        let line = text.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    /// Starts `zonertc media receive` on a free loopback port and waits until it listens.
    static func startReceiver(_ arguments: [String]) throws -> (ChildProcess, UInt16) {
        let port = freeUDPPortPair()
        let receiver = try ChildProcess.zonertc(["media", "receive", "--listen", "127.0.0.1:\(port)"] + arguments)
        #expect(receiver.waitForStderr("listening on", seconds: 20), "receiver: \(receiver.stderr)")
        return (receiver, port)
    }

    /// Sends `file` to a `zonertc media receive` with the sender's SDP; returns both JSON summaries.
    static func sendAndReceive(_ file: String, record: String, sendOptions: [String] = [],
                               receiveOptions: [String] = []) throws -> (send: [String: Any], receive: [String: Any]) {
        let port = freeUDPPortPair()
        let sdp = temporary("stream.sdp")
        defer { try? FileManager.default.removeItem(atPath: sdp) }
        let common = [file, "--to", "127.0.0.1:\(port)", "--seed", "7"] + sendOptions
        let prepare = try ZonertcProcess.run(["media", "send"] + common + ["--sdp-out", sdp, "--sdp-only"])
        #expect(prepare.status == 0, "\(prepare.stderr)")
        let receiver = try ChildProcess.zonertc(["media", "receive", "--sdp", sdp, "--record", record,
                                                 "--timeout", "10s", "--json"] + receiveOptions)
        #expect(receiver.waitForStderr("listening on", seconds: 20), "receiver: \(receiver.stderr)")
        let sender = try ChildProcess.zonertc(["media", "send"] + common + ["--json"])
        let sent = sender.wait(seconds: 60)
        let received = receiver.wait(seconds: 30)
        #expect(sent == 0, "sender: \(sender.stderr)")
        #expect(received == 0, "receiver: \(receiver.stderr)")
        return (json(sender.stdout), json(receiver.stdout))
    }

    @Test("send → receive on loopback: the VP8 file comes back byte for byte")
    func vp8LoopbackIdentical() throws {
        let out = Self.temporary("out.ivf")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (send, receive) = try Self.sendAndReceive(Self.fixture("vp8-320x240-60.ivf"), record: out)
        #expect(send["frames"] as? Int == 60 && receive["frames"] as? Int == 60)
        #expect(send["checksum"] as? String != nil && send["checksum"] as? String == receive["checksum"] as? String)
        #expect(receive["ended"] as? String == "bye" && receive["lost"] as? Int == 0)
        #expect(send["confirmed"] as? Bool == true)
        // Paced by the file: 59/30 s from the first frame to the last.
        #expect((send["durationMs"] as? Double).map { $0 > 1900 && $0 < 4000 } == true)
        #expect(receive["latency"] != nil)
        let written = try Data(contentsOf: URL(fileURLWithPath: out))
        let original = try Data(contentsOf: URL(fileURLWithPath: Self.fixture("vp8-320x240-60.ivf")))
        #expect(written == original)
    }

    @Test("send → receive with 10% loss: NACKs repair the H.264 stream")
    func h264WithLossIdentical() throws {
        let out = Self.temporary("out.h264")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (send, receive) = try Self.sendAndReceive(
            Self.fixture("h264-320x240-60.h264"), record: out,
            sendOptions: ["--pace", "max", "--impair", "loss=0.1,delay=5ms,seed=3", "--payload-type", "97",
                          "--max-payload", "400"])
        #expect(receive["frames"] as? Int == 60 && receive["lost"] as? Int == 0)
        #expect((receive["nacksSent"] as? Int ?? 0) > 0 && (send["retransmissions"] as? Int ?? 0) > 0)
        #expect(send["checksum"] as? String == receive["checksum"] as? String)
        // The access units arrive NAL unit for NAL unit (with four-byte start codes).
        let written = try AnnexBReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        let original = try AnnexBReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath:
            Self.fixture("h264-320x240-60.h264")))))
        #expect(written.map(\.nalUnits) == original.map(\.nalUnits))
    }

    @Test("send → receive, unpaced: the Y4M file comes back byte for byte")
    func y4mUnpacedIdentical() throws {
        let out = Self.temporary("out.y4m")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (send, receive) = try Self.sendAndReceive(Self.fixture("testsrc-32x24-5.y4m"), record: out,
                                                      sendOptions: ["--pace", "max"])
        #expect(send["codec"] as? String == "X-ZONERTC-GENERIC" && receive["frames"] as? Int == 5)
        let written = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(written == (try Data(contentsOf: URL(fileURLWithPath: Self.fixture("testsrc-32x24-5.y4m")))))
    }

    @Test("unpaced, a frame's packets go as one UDP_SEGMENT message and arrive coalesced; --no-gso/--no-gro too",
          arguments: [[String](), ["--no-gso"], ["--no-gro"]])
    func segmentedTrains(_ flag: [String]) throws {
        let out = Self.temporary("out.ivf")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (send, receive) = try Self.sendAndReceive(
            Self.fixture("vp8-320x240-60.ivf"), record: out,
            sendOptions: ["--pace", "max", "--max-payload", "400"] + flag.filter { $0 == "--no-gso" },
            receiveOptions: flag.filter { $0 == "--no-gro" })
        #expect(receive["frames"] as? Int == 60 && receive["lost"] as? Int == 0)
        #expect(send["checksum"] as? String != nil && send["checksum"] as? String == receive["checksum"] as? String)
        #expect(send["segmentOffload"] as? Bool == (flag != ["--no-gso"]))
        let coalesced = receive["coalescedMessages"] as? Int ?? -1
        if flag.isEmpty {
            #expect(coalesced > 0, "no train arrived as one buffer")
        } else {
            #expect(coalesced == 0)
        }
    }

    @Test("garbage datagrams at the receiver's ports are counted and dropped")
    func garbageAtTheSocket() throws {
        let out = Self.temporary("out.ivf")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (receiver, port) = try Self.startReceiver(["--record", out, "--frames", "60", "--json"])
        var random = SeededRandom(seed: 5)
        for i in 0..<300 {
            let size = Int(random.next() % 100)
            var bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if i % 3 == 0 && size > 12 { bytes[0] = 0x80; bytes[1] = 0x60 }  // RTP-looking, PT 96
            sendUDP(bytes, toPort: i % 2 == 0 ? port : port + 1)
        }
        let sender = try ChildProcess.zonertc(["media", "send", Self.fixture("vp8-320x240-60.ivf"),
                                               "--to", "127.0.0.1:\(port)", "--pace", "max", "--drain", "300ms"])
        #expect(sender.wait(seconds: 60) == 0, "sender: \(sender.stderr)")
        #expect(receiver.wait(seconds: 30) == 0, "receiver: \(receiver.stderr)")
        let summary = Self.json(receiver.stdout)
        #expect(summary["frames"] as? Int == 60)
        #expect((summary["malformed"] as? Int ?? 0) > 50, "\(receiver.stdout)")
        let frames = try IVFReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))).frames
        let original = try IVFReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath:
            Self.fixture("vp8-320x240-60.ivf"))))).frames
        #expect(frames.map(\.bytes) == original.map(\.bytes))
    }

    // MARK: ffmpeg

    /// (size, md5) of each frame, from ffmpeg's framemd5 of `path`.
    static func ffmpegFrameMD5(_ path: String) throws -> [String] {
        let ffmpeg = try ChildProcess(URL(fileURLWithPath: ExternalProgram.path("ffmpeg")!),
                                      ["-hide_banner", "-loglevel", "error", "-i", path, "-c", "copy", "-f",
                                       "framemd5", "-"])
        #expect(ffmpeg.wait(seconds: 30) == 0, "ffmpeg: \(ffmpeg.stderr)")
        return ffmpeg.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            line.split(separator: ",").suffix(2).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        }
    }

    static let fixtureFrameMD5: [String] = {
        let text = (try? String(contentsOfFile: fixture("vp8-320x240-60.ivf.framemd5"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            line.split(separator: ",").suffix(2).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        }
    }()

    @Test("ffmpeg receives zonertc media send: the same framemd5 as the input",
          .enabled(if: ExternalProgram.runnable("ffmpeg"), "ffmpeg is not installed (ZONERTC_CI=1 fails instead)"))
    func ffmpegReceives() throws {
        let ffmpegPath = try #require(ExternalProgram.path("ffmpeg"), "ffmpeg is required under ZONERTC_CI=1")
        let port = freeUDPPortPair()
        let sdp = Self.temporary("ffmpeg.sdp"), out = Self.temporary("ffmpeg-out.ivf")
        defer { for p in [sdp, out] { try? FileManager.default.removeItem(atPath: p) } }
        let common = [Self.fixture("vp8-320x240-60.ivf"), "--to", "127.0.0.1:\(port)", "--seed", "11"]
        #expect(try ZonertcProcess.run(["media", "send"] + common + ["--sdp-out", sdp, "--sdp-only"]).status == 0)
        let ffmpeg = try ChildProcess(URL(fileURLWithPath: ffmpegPath), [
            "-hide_banner", "-loglevel", "debug", "-protocol_whitelist", "file,udp,rtp", "-i", sdp,
            "-c", "copy", "-frames:v", "60", "-y", out,
        ])
        // ffmpeg must be listening before the first packet (the keyframe) leaves. At debug level it
        // reports each UDP socket it has bound (RTP, RTCP); bound sockets queue what arrives.
        let bound = ffmpeg.waitUntil(within: 20) { $0.stderr.matches(of: "end receive buffer size") >= 2 }
        #expect(bound && udpPortIsBound(port), "ffmpeg did not open port \(port): \(ffmpeg.stderr.suffix(2000))")
        let sender = try ChildProcess.zonertc(["media", "send"] + common)
        #expect(sender.wait(seconds: 60) == 0, "sender: \(sender.stderr)")
        #expect(ffmpeg.wait(seconds: 20) == 0, "ffmpeg: \(ffmpeg.stderr)")
        #expect(try Self.ffmpegFrameMD5(out) == Self.fixtureFrameMD5)
    }

    @Test("ffmpeg sends into zonertc media receive: the same frames as the input",
          .enabled(if: ExternalProgram.runnable("ffmpeg"), "ffmpeg is not installed (ZONERTC_CI=1 fails instead)"))
    func ffmpegSends() throws {
        let ffmpegPath = try #require(ExternalProgram.path("ffmpeg"), "ffmpeg is required under ZONERTC_CI=1")
        let out = Self.temporary("from-ffmpeg.ivf"), sdp = Self.temporary("from-ffmpeg.sdp")
        defer { for p in [sdp, out] { try? FileManager.default.removeItem(atPath: p) } }
        // ffmpeg 5.1 ends without an RTCP BYE: the receiver stops at the 60th frame.
        let (receiver, port) = try Self.startReceiver(["--record", out, "--frames", "60", "--timeout", "10s",
                                                       "--json"])
        let ffmpeg = try ChildProcess(URL(fileURLWithPath: ffmpegPath), [
            "-hide_banner", "-loglevel", "error", "-re", "-i", Self.fixture("vp8-320x240-60.ivf"), "-c", "copy",
            "-f", "rtp", "rtp://127.0.0.1:\(port)", "-sdp_file", sdp,
        ])
        #expect(ffmpeg.wait(seconds: 30) == 0, "ffmpeg: \(ffmpeg.stderr)")
        #expect(receiver.wait(seconds: 20) == 0, "receiver: \(receiver.stderr)")
        let summary = Self.json(receiver.stdout)
        #expect(summary["frames"] as? Int == 60 && summary["ended"] as? String == "frames")
        let frames = try IVFReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))).frames
        #expect(frames.map { "\($0.bytes.count) \(Hex.encode(MD5.hash($0.bytes)))" }
                == Self.fixtureFrameMD5)
        // ffmpeg's own SDP is one our receiver reads.
        let text = try String(contentsOfFile: sdp, encoding: .utf8)
        #expect(try RTPStreamDescription(parsing: text).codec == .vp8)
    }

    // MARK: Bad input

    @Test("usage errors exit 2 and say what is wrong", arguments: [
        (["media", "send", "--to", "127.0.0.1:5000"], "give the FILE to send"),
        (["media", "send", "x.ivf"], "--to is required"),
        (["media", "send", "x.ivf", "--to", "localhost:5000"], "give IP:PORT"),
        (["media", "send", "x.ivf", "--to", "127.0.0.1:5000", "--pace", "fast"], "choose one of realtime, max"),
        (["media", "send", "x.ivf", "--to", "127.0.0.1:5000", "--impair", "loss=2"], "between 0 and 1"),
        (["media", "send", "x.ivf", "--to", "127.0.0.1:5000", "--payload-type", "3"], "96 to 127"),
        (["media", "send", "x.ivf", "--to", "127.0.0.1:5000", "--sdp-only"], "--sdp-only needs --sdp-out"),
        (["media", "receive", "--listen", "127.0.0.1:5000"], "--record is required"),
        (["media", "receive", "--listen", "127.0.0.1:5000", "--record", "x.mp4"], "name an .ivf"),
        (["media", "receive", "--record", "x.ivf"], "give --listen"),
        (["media", "receive", "--listen", "127.0.0.1:5000", "--record", "x.ivf", "--timeout", "soon"], "duration"),
        (["media", "receive", "--listen", "127.0.0.1:5000", "--record", "x.y4m"], "needs the sender's picture"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let out = try ZonertcProcess.run(arguments)
        #expect(out.status == 2, "\(out.stderr)")
        #expect(out.stderr.contains(message), "stderr: \(out.stderr)")
    }

    @Test("a truncated IVF fails before sending, with the offset")
    func truncatedFile() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.fixture("vp8-320x240-60.ivf")))
        let path = Self.temporary("cut.ivf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try bytes.prefix(10_000).write(to: URL(fileURLWithPath: path))
        let out = try ZonertcProcess.run(["media", "send", path, "--to", "127.0.0.1:9"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("truncated at offset") && out.stderr.contains("cut.ivf"), "\(out.stderr)")
        let missing = try ZonertcProcess.run(["media", "send", path + ".nope", "--to", "127.0.0.1:9"])
        #expect(missing.status == 1 && missing.stderr.contains("No such file"), "\(missing.stderr)")
    }

    @Test("an SDP that does not parse fails with its line; silence ends in a timeout")
    func badSDPAndSilence() throws {
        let sdp = Self.temporary("bad.sdp"), out = Self.temporary("never.ivf")
        defer { for p in [sdp, out] { try? FileManager.default.removeItem(atPath: p) } }
        try "v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\na=rtpmap:96 AV1/90000\n"
            .write(toFile: sdp, atomically: true, encoding: .utf8)
        let bad = try ZonertcProcess.run(["media", "receive", "--sdp", sdp, "--record", out])
        #expect(bad.status == 1 && bad.stderr.contains("no payload type of a codec"), "\(bad.stderr)")
        let started = Date()
        let (receiver, _) = try Self.startReceiver(["--record", out, "--timeout", "500ms"])
        #expect(receiver.wait(seconds: 20) == 1)
        #expect(receiver.stderr.contains("no frame arrived within 500ms"), "\(receiver.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
