import Foundation
import Media
import MediaNet
import Net
import RecordStore
import ZoneCore

/// `zonertc media send`: a video file's frames as plain RTP (no ICE), for ffmpeg, GStreamer or
/// `zonertc media receive`.
enum MediaSendCommand {
    static let spec = CommandSpec(
        path: ["media", "send"],
        summary: "Send a video file as plain RTP (VP8, H.264 or generic) with RTCP, NACK repair and BYE.",
        positionals: [("FILE", "an IVF (any FourCC), H.264 Annex B (.h264/.264) or Y4M file")],
        options: [
            .value("--to", "HOST:PORT", "(required) where the RTP goes; RTCP goes to PORT+1 (or PORT, --rtcp-mux)"),
            .value("--sdp-out", "FILE", "write the SDP a receiver needs (ffmpeg -i FILE, zonertc media receive --sdp)"),
            .flag("--sdp-only", "write the SDP and exit without sending"),
            .value("--pace", "realtime|max", "frames at the file's timestamps, or as fast as the path takes",
                   default: "realtime"),
            .value("--ssrc", "N", "the RTP SSRC (default: random)"),
            .value("--seed", "N", "derive SSRC, first sequence number and timestamp origin from N (default: "
                   + "random); a --sdp-only run and a later run with the same seed match"),
            .value("--payload-type", "N", "the RTP payload type, 96-127", default: "96"),
            .value("--max-payload", "BYTES", "the largest RTP payload", default: "1200"),
            .value("--fps", "N", "frame rate of raw H.264, which has no timestamps", default: "30"),
            .flag("--rtcp-mux", "send RTCP to the RTP port (RFC 5761) instead of PORT+1"),
            .value("--bind", "HOST:PORT", "local address to send from (default: any, a free port)"),
            .value("--impair", "SPEC", "seeded loss/delay on what is sent: loss=0.1,delay=20ms,jitter=5ms,"
                   + "reorder=0.05,reorder-gap=10ms,duplicate=0.01,seed=1 (--link's names; latency= works for "
                   + "delay=)"),
            .value("--window", "PACKETS", "with --pace max: the most packets ahead of the receiver's last report "
                   + "(0: no limit)", default: "2048"),
            .value("--drain", "DURATION", "how long to wait for NACKs and the receiver's report after the last "
                   + "frame", default: "1s"),
            .flag("--no-gso", "send datagrams one by one, not as UDP_SEGMENT runs (a frame's packets in one message)"),
            .flag("--json", "print the summary as one JSON object"),
        ],
        discussion: """
            RTP goes to HOST:PORT and RTCP (sender reports, BYE) to HOST:PORT+1, as ffmpeg expects; RTCP
            from the receiver (receiver reports, generic NACK, PLI) is read on the sending socket. VP8 IVF
            files use RFC 7741, H.264 RFC 6184 (packetization-mode=1); other IVF FourCCs and Y4M use a
            generic payload only zonertc reads. After the last frame the sender sends BYE and keeps
            answering NACKs until the receiver confirms every packet or --drain passes quietly.
            The summary gives frames, packets, retransmissions and the stream checksum, which
            `zonertc media receive` prints too when the frames arrived identical.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        guard let path = args.positionals.first else {
            throw UsageError(message: "give the FILE to send", command: spec)
        }
        let to = try endpoint(try args.required("--to"), "--to")
        guard to.port != 0 else { throw UsageError(message: "--to needs a port other than 0", command: spec) }
        let pace = try args.choice("--pace", as: MediaSender.Pace.self) ?? .realtime
        let payloadType = try args.int("--payload-type", in: UInt8(96)...UInt8(127)) ?? 96
        let maxPayload = try args.int("--max-payload", in: 64...65_000) ?? 1200
        let fps = try args.int("--fps", in: UInt32(1)...UInt32(1000)) ?? 30
        let ssrc = try args.int("--ssrc", in: UInt32(0)...UInt32.max)
        var impairment: ImpairmentSpec?
        if let text = args.string("--impair") {
            do { impairment = try ImpairmentSpec(parsing: text) } catch {
                throw UsageError(message: "--impair: \(error.reason)", command: spec)
            }
        }
        let drain: Duration
        do { drain = try PushProfile.parseDuration(args.string("--drain") ?? "1s") } catch {
            throw UsageError(message: "--drain: \(error)", command: spec)
        }
        let bind = try args.string("--bind").map { try endpoint($0, "--bind") }
            ?? Endpoint(address: try IPAddress(parsing: to.family == .ipv4 ? "0.0.0.0" : "::"), port: 0)
        let json = args.has("--json")

        if args.has("--sdp-only") && args.string("--sdp-out") == nil {
            throw UsageError(message: "--sdp-only needs --sdp-out FILE", command: spec)
        }
        // Read the file through once first: a malformed file fails here, before anything is sent.
        let scan: (format: VideoStreamFormat, checksum: FrameChecksum)
        do {
            var source = try VideoFileSource(path: path, frameRate: fps)
            var checksum = FrameChecksum(codec: source.format.codec)
            while let frame = try source.nextFrame() { checksum.add(frame) }
            scan = (source.format, checksum)
        } catch {
            Terminal.error("zonertc media send: \(error)")
            return 1
        }
        let codec = scan.format.codec
        let seed = try args.int("--seed", in: UInt64(0)...UInt64.max) ?? UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed: seed)
        var configuration = MediaSender.Configuration.random(codec: codec, using: &random)
        if let ssrc { configuration.ssrc = ssrc }
        configuration.payloadType = payloadType
        configuration.pace = pace
        configuration.maxPayloadSize = maxPayload
        configuration.drainTimeout = drain
        let window = try args.int("--window", in: 0...1_000_000) ?? 2048
        configuration.window = pace == .max && window > 0 ? window : nil
        // Enough packets to answer NACKs for the last second at any pace this machine reaches.
        configuration.retransmissionCapacity = pace == .max ? 32768 : 4096
        configuration.cname = "zonertc-\(configuration.ssrc)"
        let rtcpMux = args.has("--rtcp-mux")
        let description = RTPStreamDescription(
            address: to.address.description, port: to.port, payloadType: payloadType, codec: codec,
            rtcpMux: rtcpMux, ssrc: configuration.ssrc, format: scan.format,
            timestampOrigin: configuration.timestampOrigin, firstSequenceNumber: configuration.initialSequenceNumber)
        if let sdpPath = args.string("--sdp-out") {
            do { try description.text.write(toFile: sdpPath, atomically: true, encoding: .utf8) } catch {
                Terminal.error("zonertc media send: cannot write the SDP to \(sdpPath): \(error.localizedDescription)")
                return 1
            }
        }
        if args.has("--sdp-only") { return 0 }

        let source: VideoFileSource
        let socket: UDPSocket
        let loop: EventLoop
        do {
            source = try VideoFileSource(path: path, frameRate: fps)
            socket = try UDPSocket(bind: bind, segmentOffload: !args.has("--no-gso"))
            loop = try EventLoop(name: "zonertc-media-send")
        } catch {
            Terminal.error("zonertc media send: \(error)")
            return 1
        }
        let rtcpDestination = Endpoint(address: to.address, port: rtcpMux ? to.port : to.port &+ 1)
        let sender = MediaSender(configuration: configuration, timebase: scan.format.timebase, now: loop.clock.now())
        let runner = MediaSenderRunner(
            sender: sender, source: source, socket: socket, loop: loop,
            options: .init(rtpDestination: to, rtcpDestination: rtcpDestination, impairment: impairment))
        if !json {
            Terminal.error("zonertc media send: \(path) (\(codec), \(scan.checksum.frameCount) frames) from "
                           + "\(socket.localEndpoint) to \(to), RTCP \(rtcpDestination), pace \(pace.rawValue)")
        }
        loop.start()
        let interrupt = InterruptWatch { runner.stop() }
        let result = await withCheckedContinuation { continuation in
            runner.start { continuation.resume(returning: $0) }
        }
        interrupt.cancel()
        loop.stop()

        let summary = Summary(result: result, path: path, codec: codec, destination: to,
                              checksum: scan.checksum, interrupted: interrupt.fired,
                              segmentOffload: socket.segmentOffload)
        if json {
            print(try Terminal.json(summary))
        } else {
            print(summary.text)
        }
        for event in result.events {
            switch event {
            case .frameSkipped(let pts, let reason):
                Terminal.error("zonertc media send: frame at pts \(pts) skipped: \(reason)")
            case .keyframeRequested, .finished:
                break
            }
        }
        if let reason = result.sourceFailure {
            Terminal.error("zonertc media send: reading the file failed: \(reason)")
            return 1
        }
        if interrupt.fired {
            Terminal.error("zonertc media send: interrupted")
            return 1
        }
        return 0
    }

    static func endpoint(_ text: String, _ flag: String) throws -> Endpoint {
        do { return try Endpoint(parsing: text) } catch {
            throw UsageError(message: "\(flag) \(text): give IP:PORT or [IPv6]:PORT (\(error))", command: spec)
        }
    }

    /// What `zonertc media send` prints at the end.
    struct Summary: Encodable {
        var command = "media send"
        var file: String
        var codec: String
        var destination: String
        var frames: Int
        var framesSkipped: Int
        var packets: Int
        var bytes: Int
        var mediaBytes: Int
        var retransmissions: Int
        var nacksReceived: Int
        var plisReceived: Int
        var receiverReports: Int
        var lossFraction: Double?
        var cumulativeLost: Int?
        var rttMs: Double?
        var jitterMs: Double?
        var confirmed: Bool
        var checksum: String
        var durationMs: Double
        var goodputMbps: Double
        var interrupted: Bool
        /// Whether runs still went as UDP_SEGMENT messages at the end (false: --no-gso, or the kernel refused).
        var segmentOffload: Bool

        init(result: MediaSenderRunner.Result, path: String, codec: VideoCodec, destination: Endpoint,
             checksum: FrameChecksum, interrupted: Bool, segmentOffload: Bool) {
            let s = result.stats
            file = path
            self.codec = codec.encodingName
            self.destination = destination.description
            frames = s.framesSent
            framesSkipped = s.framesSkipped
            packets = s.packetsSent
            bytes = s.bytesSent
            mediaBytes = s.mediaBytesSent
            retransmissions = s.retransmissions
            nacksReceived = s.nacksReceived
            plisReceived = s.plisReceived
            receiverReports = s.receiverReports
            lossFraction = s.lossFraction
            cumulativeLost = s.cumulativeLost
            rttMs = s.rtt?.milliseconds
            jitterMs = s.jitter?.milliseconds
            confirmed = s.confirmedComplete
            self.checksum = checksum.digest
            let sending = (result.lastMediaSent ?? result.ended) - result.started
            durationMs = sending.milliseconds
            goodputMbps = sending > .zero ? Double(s.mediaBytesSent) * 8 / sending.seconds / 1e6 : 0
            self.interrupted = interrupted
            self.segmentOffload = segmentOffload
        }

        var text: String {
            var lines = ["zonertc media send: sent \(frames) frames (\(codec)) to \(destination) in "
                         + String(format: "%.2f s", durationMs / 1000)
                         + String(format: ", %.1f Mbit/s", goodputMbps)]
            lines.append("  packets \(packets) (\(bytes) bytes, \(mediaBytes) of frames), retransmitted "
                         + "\(retransmissions), NACKs \(nacksReceived), PLIs \(plisReceived)")
            var report = "  receiver: "
            if receiverReports == 0 {
                report += "no reports"
            } else {
                report += "\(receiverReports) reports"
                if let lossFraction { report += String(format: ", loss %.1f %%", lossFraction * 100) }
                if let cumulativeLost { report += ", lost \(cumulativeLost)" }
                if let rttMs { report += String(format: ", rtt %.2f ms", rttMs) }
                if let jitterMs { report += String(format: ", jitter %.2f ms", jitterMs) }
                report += confirmed ? ", confirmed every packet" : ""
            }
            lines.append(report)
            lines.append("  checksum \(checksum)")
            return lines.joined(separator: "\n")
        }
    }
}
