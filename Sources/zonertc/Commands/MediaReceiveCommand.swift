import Foundation
import Media
import MediaNet
import Net
import RecordStore
import ZoneCore

/// `zonertc media receive`: a plain RTP video stream (from `zonertc media send`, ffmpeg or
/// GStreamer) into a file.
enum MediaReceiveCommand {
    static let spec = CommandSpec(
        path: ["media", "receive"],
        summary: "Receive a plain RTP video stream into an IVF, H.264 or Y4M file, repairing loss with NACKs.",
        options: [
            .value("--listen", "HOST:PORT", "where RTP arrives; RTCP on PORT+1 too (default: from --sdp)"),
            .value("--sdp", "FILE", "the sender's SDP (zonertc media send --sdp-out, ffmpeg -sdp_file)"),
            .value("--record", "OUT", "(required) the file to write: .ivf, .h264/.264 or .y4m"),
            .value("--frames", "N", "stop after N frames"),
            .value("--timeout", "DURATION", "give up when nothing arrives for this long", default: "10s"),
            .value("--codec", "vp8|h264|generic", "the codec, without --sdp (default: from OUT's extension)"),
            .value("--payload-type", "N", "the RTP payload type to accept (default: from --sdp, or the first seen)"),
            .value("--latency", "DURATION", "how long a frame may wait for repairs of lost packets",
                   default: "200ms"),
            .flag("--no-gro", "read datagrams one per message, without UDP_GRO coalescing trains from one source"),
            .flag("--json", "print the summary as one JSON object"),
        ],
        discussion: """
            Prints `zonertc media receive: listening on HOST:PORT (RTCP …)` on stderr when ready. RTP
            arrives on PORT, RTCP on PORT+1 (and RTCP on PORT is recognized too: rtcp-mux). Receiver
            reports, generic NACKs and PLIs go back to the sender's RTCP address. The run ends after the
            sender's BYE once nothing more can arrive, after --frames N, after --timeout of silence, or
            on SIGINT; the file is complete in every case. With the SDP of `zonertc media send` the file
            gets the sender's container header and timestamps (the summary's checksum then equals the
            sender's); without it the time base is the 90 kHz RTP clock. Exit 0 when frames arrived.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        let output = try args.required("--record")
        let json = args.has("--json")
        var description: RTPStreamDescription?
        if let sdpPath = args.string("--sdp") {
            do {
                let text = try String(contentsOfFile: sdpPath, encoding: .utf8)
                description = try RTPStreamDescription(parsing: text)
            } catch let error as RTPStreamDescriptionError {
                Terminal.error("zonertc media receive: \(sdpPath): \(error)")
                return 1
            } catch {
                Terminal.error("zonertc media receive: cannot read \(sdpPath): \(error.localizedDescription)")
                return 1
            }
        }
        let listen: Endpoint
        if let text = args.string("--listen") {
            listen = try MediaSendCommand.endpoint(text, "--listen")
        } else if let description, let address = try? IPAddress(parsing: description.address) {
            listen = Endpoint(address: address, port: description.port)
        } else {
            throw UsageError(message: "give --listen HOST:PORT (or an --sdp with an IP address)", command: spec)
        }
        let frameLimit = try args.int("--frames", in: 1...Int.max)
        let timeout: Duration, latency: Duration
        do {
            timeout = try PushProfile.parseDuration(args.string("--timeout") ?? "10s")
            latency = try PushProfile.parseDuration(args.string("--latency") ?? "200ms")
        } catch {
            throw UsageError(message: "\(error)", command: spec)
        }
        guard timeout > .zero else { throw UsageError(message: "--timeout must be positive", command: spec) }
        let lower = output.lowercased()
        let extensionCodec: VideoCodec? = lower.hasSuffix(".ivf") ? .vp8
            : lower.hasSuffix(".h264") || lower.hasSuffix(".264") ? .h264 : lower.hasSuffix(".y4m") ? .generic : nil
        guard extensionCodec != nil else {
            throw UsageError(message: "--record \(output): name an .ivf, .h264, .264 or .y4m file", command: spec)
        }
        let codec = try args.choice("--codec", as: VideoCodec.self) ?? description?.codec ?? extensionCodec!
        let payloadType = try args.int("--payload-type", in: UInt8(0)...UInt8(127)) ?? description?.payloadType
        let format: VideoStreamFormat
        do {
            format = try outputFormat(output, codec: codec, sender: description?.format)
        } catch let error as UsageError {
            throw UsageError(message: error.message, command: spec)
        }

        // Sockets: RTP on the port, RTCP on the next one (ports chosen together when PORT is 0).
        let sockets: (rtp: UDPSocket, rtcp: UDPSocket?)
        let loop: EventLoop
        var sink: VideoFileSink
        do {
            sockets = try bindPair(listen, rtcpMux: description?.rtcpMux ?? false,
                                   coalescedReceive: !args.has("--no-gro"))
            loop = try EventLoop(name: "zonertc-media-receive")
            sink = try VideoFileSink(path: output, format: format)
        } catch {
            Terminal.error("zonertc media receive: \(error)")
            return 1
        }
        var configuration = MediaReceiver.Configuration(codec: codec, ssrc: UInt32.random(in: 1...UInt32.max))
        configuration.payloadType = payloadType
        configuration.remoteSSRC = description?.ssrc
        configuration.timebase = format.timebase
        configuration.timestampOrigin = description?.timestampOrigin
        configuration.firstSequenceNumber = description?.firstSequenceNumber
        configuration.jitterBufferLatency = latency
        // Room for the bursts an unpaced gigabit stream loses when this process is descheduled,
        // and NACK retries for as long as the jitter buffer waits.
        configuration.maxBufferedPackets = 32768
        configuration.nack.maxMissing = 16384
        let resend = max(configuration.roundTripTime, configuration.nack.minimumResendInterval)
        configuration.nack.maxRetries = max(10, Int(latency / resend))
        configuration.cname = "zonertc-receiver-\(configuration.ssrc)"
        let receiver = MediaReceiver(configuration: configuration, now: loop.clock.now())
        let runner = MediaReceiverRunner(receiver: receiver, rtpSocket: sockets.rtp, rtcpSocket: sockets.rtcp,
                                         loop: loop, options: .init(idleTimeout: timeout))
        let rtcpText = sockets.rtcp.map { "RTCP on \($0.localEndpoint)" } ?? "RTCP on the RTP port"
        Terminal.error("zonertc media receive: listening on \(sockets.rtp.localEndpoint) (\(rtcpText)), "
                       + "recording \(codec) to \(output)")

        // The frames go to the file on the loop's thread; the counters come back at the end.
        let recording = Recording(sink: sink, codec: codec, limit: frameLimit)
        loop.start()
        let interrupt = InterruptWatch { runner.stop() }
        let result = await withCheckedContinuation { continuation in
            runner.start(onFrame: { frame, timing in recording.take(frame, timing) },
                         onFinish: { continuation.resume(returning: $0) })
        }
        interrupt.cancel()
        loop.stop()
        sink = recording.sink
        var failure = recording.failure
        if failure == nil {
            do { try sink.finish() } catch { failure = error }
        }
        let summary = Summary(result: result, output: output, codec: codec, recording: recording,
                              coalescedMessages: sockets.rtp.coalescedMessages)
        if json {
            print(try Terminal.json(summary))
        } else {
            print(summary.text)
        }
        if let failure {
            Terminal.error("zonertc media receive: writing \(output) failed: \(failure)")
            return 1
        }
        guard recording.checksum.frameCount > 0 else {
            Terminal.error("zonertc media receive: no frame arrived"
                           + (result.ending == .idle ? " within \(args.string("--timeout") ?? "10s")" : ""))
            return 1
        }
        return 0
    }

    /// The container written: the sender's (when its SDP said it and OUT names the same
    /// container), else one made from OUT's extension, the codec and the RTP clock.
    static func outputFormat(_ output: String, codec: VideoCodec, sender: VideoStreamFormat?) throws
        -> VideoStreamFormat {
        let lower = output.lowercased()
        let timebase = sender?.timebase ?? Timebase(numerator: 1, denominator: 90_000)
        if lower.hasSuffix(".ivf") {
            if let sender, case .ivf = sender.container { return sender }
            let fourCC: FourCC = codec == .vp8 ? .vp8 : codec == .h264 ? .h264 : FourCC("ZRTC")
            return VideoStreamFormat(container: .ivf(IVFHeader(fourCC: fourCC, width: 0, height: 0,
                                                               rate: timebase.denominator, scale: timebase.numerator,
                                                               frameCount: 0)))
        }
        if lower.hasSuffix(".y4m") {
            guard let sender, case .y4m = sender.container else {
                throw UsageError(message: "--record \(output): a Y4M file needs the sender's picture format; give "
                                 + "--sdp from zonertc media send of a Y4M file")
            }
            return sender
        }
        if let sender, case .annexB = sender.container { return sender }
        return VideoStreamFormat(container: .annexB(frameRate: timebase.denominator, per: timebase.numerator))
    }

    /// Binds RTP on `listen` and RTCP on the next port (unless multiplexed). For port 0 it
    /// looks for a free pair, as RTP tools do. `coalescedReceive` asks for UDP_GRO on the RTP socket,
    /// where the media trains arrive.
    static func bindPair(_ listen: Endpoint, rtcpMux: Bool, coalescedReceive: Bool = false) throws
        -> (rtp: UDPSocket, rtcp: UDPSocket?) {
        if rtcpMux { return (try UDPSocket(bind: listen, coalescedReceive: coalescedReceive), nil) }
        if listen.port != 0 {
            guard listen.port < UInt16.max else { throw SocketError("bind: no port after \(listen.port) for RTCP") }
            let rtp = try UDPSocket(bind: listen, coalescedReceive: coalescedReceive)
            return (rtp, try UDPSocket(bind: Endpoint(address: listen.address, port: listen.port + 1)))
        }
        var lastError: Error = SocketError("bind: no free port pair", code: 0)
        for _ in 0..<50 {
            let rtp = try UDPSocket(bind: listen, coalescedReceive: coalescedReceive)
            let port = rtp.localEndpoint.port
            guard port < UInt16.max else { continue }
            do { return (rtp, try UDPSocket(bind: Endpoint(address: listen.address, port: port + 1))) } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// The receiving side's file, checksum and latency record, touched only on the loop's thread.
    final class Recording: @unchecked Sendable {
        var sink: VideoFileSink
        var checksum: FrameChecksum
        var latency = LatencyHistogram()
        let limit: Int?
        var failure: Error?

        init(sink: VideoFileSink, codec: VideoCodec, limit: Int?) {
            self.sink = sink
            checksum = FrameChecksum(codec: codec)
            self.limit = limit
        }

        /// Writes a frame; false ends the run (the limit is reached, or writing failed).
        func take(_ frame: VideoFrame, _ timing: MediaReceiver.FrameTiming?) -> Bool {
            guard failure == nil else { return false }
            do { try sink.write(frame) } catch {
                failure = error
                return false
            }
            checksum.add(frame)
            if let latency = timing?.latency, latency >= .zero { self.latency.record(latency) }
            return limit.map { checksum.frameCount < $0 } ?? true
        }
    }

    /// What `zonertc media receive` prints at the end.
    struct Summary: Encodable {
        var command = "media receive"
        var output: String
        var codec: String
        var source: String?
        var ended: String
        var frames: Int
        /// Frames dropped before the first keyframe (no --sdp: the stream may have been joined midway).
        var framesBeforeKeyframe: Int
        var frameBytes: Int
        var packets: Int
        var bytes: Int
        var lost: Int
        var recovered: Int
        var duplicates: Int
        var late: Int
        var nacksSent: Int
        var plisSent: Int
        var malformed: Int
        var checksum: String
        var durationMs: Double
        var goodputMbps: Double
        /// Sender-to-receiver frame latency by the sender reports' clock (same-host clocks).
        var latency: LatencySummary?
        /// RTP socket reads that held several datagrams (UDP_GRO; 0 with --no-gro or when refused).
        var coalescedMessages: Int

        init(result: MediaReceiverRunner.Result, output: String, codec: VideoCodec, recording: Recording,
             coalescedMessages: Int) {
            let s = result.stats
            self.output = output
            self.codec = codec.encodingName
            source = result.source?.description
            ended = result.ending.rawValue
            frames = recording.checksum.frameCount
            framesBeforeKeyframe = s.framesBeforeKeyframe
            frameBytes = s.frameBytes
            packets = s.packetsReceived
            bytes = s.bytesReceived
            lost = s.lost
            recovered = s.recovered
            duplicates = s.duplicates
            late = s.late
            nacksSent = s.nacksSent
            plisSent = s.plisSent
            malformed = s.malformed + s.wrongPayloadType + s.wrongSSRC
            checksum = recording.checksum.digest
            let receiving = (result.lastFrame ?? result.ended) - (result.firstArrival ?? result.started)
            durationMs = receiving.milliseconds
            goodputMbps = receiving > .zero ? Double(s.frameBytes) * 8 / receiving.seconds / 1e6 : 0
            latency = recording.latency.isEmpty ? nil : recording.latency.summary
            self.coalescedMessages = coalescedMessages
        }

        var text: String {
            var lines = ["zonertc media receive: recorded \(frames) frames (\(codec)) to \(output) in "
                         + String(format: "%.2f s", durationMs / 1000) + String(format: ", %.1f Mbit/s", goodputMbps)
                         + " (ended: \(ended))"
                         + (framesBeforeKeyframe > 0 ? "; \(framesBeforeKeyframe) before the first keyframe skipped"
                            : "")]
            lines.append("  packets \(packets) (\(bytes) bytes), lost \(lost), retransmitted \(recovered), "
                         + "duplicates \(duplicates), NACKs \(nacksSent), PLIs \(plisSent), garbage \(malformed)")
            if let latency {
                lines.append(String(format: "  latency p50 %.2f ms, p99 %.2f ms (sender reports' clock)",
                                    latency.p50Ms, latency.p99Ms))
            }
            lines.append("  checksum \(checksum)")
            return lines.joined(separator: "\n")
        }
    }
}
