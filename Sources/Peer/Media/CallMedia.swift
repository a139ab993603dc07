// The media of a call, sans-I/O: what this peer sends (a file's frames as RTP, paced) and what
// it receives (RTP into frames), multiplexed with RTCP on the selected pair (RFC 5761) once ICE
// has selected it. The sender's stream format travels in its SDP as `a=x-zonertc-format`, and
// where its RTP clock starts as `a=x-zonertc-rtp-origin:RTP PTS` (the RTP timestamp of its first
// frame, and that frame's pts), so the receiver records the same container with the same
// timestamps, even when the file's first pts is not 0. A sender that names no
// format (a browser, aiortc) is recorded in its codec's container at the RTP clock, timestamps
// rebased to its first frame (`VideoStreamFormat.recordingRTPClock`).
//
// In the browsers' dialect the descriptions also name SSRCs and RTX (RFC 4588): we send from the
// SSRCs our own description announced, retransmit on our RTX SSRC at the remote's RTX payload
// type, and take the remote's retransmissions from its RTX SSRC and payload type.

import Media
import Signaling
import ZoneCore

/// What media a peer sends and receives.
public struct CallMediaConfiguration: Sendable {
    /// A file's frames to send, with its format.
    public struct Outgoing: Sendable {
        public var format: VideoStreamFormat
        public var frames: [VideoFrame]

        public init(format: VideoStreamFormat, frames: [VideoFrame]) {
            self.format = format
            self.frames = frames
        }
    }

    public var send: Outgoing?
    /// Receive the remote's stream (and report its frames).
    public var receive: Bool
    public var pace: MediaSender.Pace
    /// How long a frame may wait for retransmissions.
    public var jitterBufferLatency: Duration

    public init(send: Outgoing? = nil, receive: Bool = false, pace: MediaSender.Pace = .realtime,
                jitterBufferLatency: Duration = .milliseconds(200)) {
        self.send = send
        self.receive = receive
        self.pace = pace
        self.jitterBufferLatency = jitterBufferLatency
    }
}

/// The media side of a call, sans-I/O.
public struct CallMedia {
    public enum Input: Sendable { case timer }
    public enum Output: Sendable {
        /// An RTP or RTCP packet for the selected pair.
        case packet([UInt8])
        /// A received frame, in order, with its original timestamp.
        case frame(VideoFrame)
        /// Every stream this peer takes part in is done.
        case finished
    }

    static let formatAttribute = "x-zonertc-format"
    static let originAttribute = "x-zonertc-rtp-origin"

    public let configuration: CallMediaConfiguration
    private var sender: MediaSender?
    private var receiver: MediaReceiver?
    private var random: SeededRandom
    /// The payload type the remote accepts our codec at.
    private var remotePayloadType: UInt8?
    /// The RTX payload type the remote pairs with `remotePayloadType`, if any.
    private var remoteRetransmissionPayloadType: UInt8?
    /// The SSRCs our own description announced (browsers' dialect), which we must send from.
    private var announcedSources: (ssrc: UInt32, retransmissionSSRC: UInt32?)?
    /// What the receiver takes when the remote's description pins it: payload type, SSRC, RTX.
    private var receiveStream: (payloadType: UInt8?, ssrc: UInt32?, retransmission: RetransmissionStream?)
        = (nil, nil, nil)
    /// The remote's stream format (from its SDP), when it sends.
    public private(set) var remoteFormat: VideoStreamFormat?
    /// The remote's RTP timestamp of its first frame's pts (from its SDP), when it names one.
    public private(set) var remoteOrigin: RTPTimestampOrigin?
    /// The RTP timestamp of pts 0 of what we send, chosen at the start so our descriptions can
    /// name it (RFC 3550 §5.1: random).
    private let sendTimestampZero: UInt32
    private var sentChecksum: FrameChecksum?
    private var receivedChecksum: FrameChecksum?
    private var senderDone = false
    private var receiverDone = false
    private var reportedFinished = false
    private var stopped = false
    private var latencies = LatencyHistogram()
    private var pending: [Output] = []
    private var pendingHead = 0
    /// Media packets that arrived with nothing to take them (no receiver: this peer does not
    /// record, or the sender's format is unknown).
    private var droppedWithoutReceiver = 0
    /// Why this peer's media cannot work with the remote description (the call fails with it).
    public private(set) var problem: String?

    init(configuration: CallMediaConfiguration, seed: UInt64) {
        self.configuration = configuration
        random = SeededRandom(seed: seed ^ 0x6D65_6469_61)
        // A stream of its own, so the other random choices stay what they were.
        var originRandom = SeededRandom(seed: seed ^ 0x6F72_6967_696E)
        sendTimestampZero = UInt32(truncatingIfNeeded: originRandom.next())
        if let send = configuration.send {
            sentChecksum = FrameChecksum.of(send.frames, codec: send.format.codec)
        }
        senderDone = configuration.send == nil
        receiverDone = !configuration.receive
    }

    /// Our descriptions' attributes: the stream format and RTP origin of what we send.
    var sdpAttributes: [SDPAttribute] {
        guard let send = configuration.send else { return [] }
        var attributes: [SDPAttribute] = [.other(name: Self.formatAttribute, value: send.format.attributeValue)]
        if let first = send.frames.first {
            let origin = RTPTimestampOrigin(sendingFromZero: sendTimestampZero, firstPTS: first.pts,
                                            timebase: send.format.timebase)
            attributes.append(.other(name: Self.originAttribute, value: origin.attributeValue))
        }
        return attributes
    }

    /// Whether this peer sends or receives anything.
    public var isActive: Bool { configuration.send != nil || configuration.receive }

    /// Our own description: the SSRCs it announced (none in today's dialect).
    mutating func localDescription(_ description: SessionDescription) {
        announcedSources = description.media.first { $0.kind == .video && !$0.isRejected }?.sendingSources
    }

    /// The remote's description: the payload type for our codec, the remote's stream format; the
    /// receiver starts here, before ICE completes, so the first packets are never missed.
    mutating func remoteDescription(_ description: SessionDescription, now: Instant) {
        guard let section = description.media.first(where: { $0.kind == .video && !$0.isRejected }) else { return }
        let remote = try? RemoteVideoDescription(description)
        if let send = configuration.send {
            let name = send.format.codec.encodingName.lowercased()
            remotePayloadType = section.codecs.first { $0.name.lowercased() == name }?.payloadType
                ?? section.codecs.first?.payloadType
            remoteRetransmissionPayloadType = remotePayloadType.flatMap { remote?.retransmissionPayloadType(for: $0) }
        }
        var formatProblem = "the sender's description has no a=\(Self.formatAttribute)"
        var originProblem: String?
        for attribute in section.attributes {
            if case .other(let name, let value) = attribute, name == Self.formatAttribute {
                do {
                    remoteFormat = try VideoStreamFormat(attributeValue: value ?? "")
                } catch {
                    formatProblem = "the sender's a=\(Self.formatAttribute) is unusable: \(error)"
                }
            } else if case .other(let name, let value) = attribute, name == Self.originAttribute {
                do { remoteOrigin = try RTPTimestampOrigin(attributeValue: value ?? "") } catch {
                    originProblem = "the sender's a=\(Self.originAttribute) is unusable: \(error)"
                }
            }
        }
        if let remote { receiveFromBrowser(remote) }
        // A recorder that cannot know the container would connect and drop every packet: refuse.
        if configuration.receive, remoteFormat == nil, problem == nil {
            problem = "cannot record: \(formatProblem)"
        }
        // Timestamps recorded from a guessed origin would differ from the sender's: refuse too.
        if configuration.receive, let originProblem, problem == nil {
            problem = "cannot record: \(originProblem)"
        }
        startReceiver(now: now)
    }

    /// What a remote in the browsers' dialect pins for our receiver: its RTX stream, and when it
    /// names no stream format (a browser), the first codec of its list we can record (the one it
    /// sends, RFC 8829 §5.3.1 / RFC 3264 §6.1), recorded at the RTP clock, from its SSRC.
    private mutating func receiveFromBrowser(_ remote: RemoteVideoDescription) {
        var codec: RTPCodec?
        // Only a sender in the browsers' dialect (DTLS-SRTP, or announcing its SSRCs) may leave out
        // the format: a plain zonertc sender without it is refused (see remoteDescription).
        let isBrowserDialect = remote.security == .dtlsSRTP || remote.ssrc != nil
        if remoteFormat == nil, isBrowserDialect {
            codec = remote.codecs.first {
                VideoCodec(encodingName: $0.name).flatMap(VideoStreamFormat.recordingRTPClock(of:)) != nil
            }
            if let codec, let videoCodec = VideoCodec(encodingName: codec.name) {
                remoteFormat = VideoStreamFormat.recordingRTPClock(of: videoCodec)
                receiveStream.payloadType = codec.payloadType
                receiveStream.ssrc = remote.direction.sends ? remote.ssrc : nil
            }
        } else {
            codec = remote.codecs.first { VideoCodec(encodingName: $0.name) == remoteFormat?.codec }
        }
        if let codec, let rtx = remote.retransmissionPayloadType(for: codec.payloadType) {
            receiveStream.retransmission = RetransmissionStream(ssrc: remote.retransmissionSSRC, payloadType: rtx)
        }
    }

    private mutating func startReceiver(now: Instant) {
        guard receiver == nil, !stopped, configuration.receive, let format = remoteFormat else { return }
        receivedChecksum = FrameChecksum(codec: format.codec)
        var rc = MediaReceiver.Configuration(
            codec: format.codec, ssrc: UInt32(truncatingIfNeeded: random.next()),
            jitterBufferLatency: configuration.jitterBufferLatency, timebase: format.timebase)
        rc.payloadType = receiveStream.payloadType
        rc.remoteSSRC = receiveStream.ssrc
        rc.retransmission = receiveStream.retransmission
        // Without the sender's origin (a browser, aiortc) pts start at 0 from its first frame.
        rc.timestampOrigin = remoteOrigin?.rtpTimestamp
        rc.firstPTS = remoteOrigin?.pts ?? 0
        receiver = MediaReceiver(configuration: rc, now: now)
    }

    /// A pair is selected: streams start (once).
    mutating func connected(now: Instant) {
        guard !stopped else { return }
        if sender == nil, let send = configuration.send {
            var sc = MediaSender.Configuration.random(codec: send.format.codec, using: &random)
            sc.payloadType = remotePayloadType ?? 96
            sc.timestampOrigin = sendTimestampZero
            sc.pace = configuration.pace
            if let announced = announcedSources {
                sc.ssrc = announced.ssrc
                if let rtxSSRC = announced.retransmissionSSRC, let rtxType = remoteRetransmissionPayloadType {
                    sc.retransmission = RetransmissionStream(ssrc: rtxSSRC, payloadType: rtxType)
                    sc.retransmissionInitialSequenceNumber = UInt16(truncatingIfNeeded: random.next())
                }
            }
            sender = MediaSender(configuration: sc, frames: send.frames, timebase: send.format.timebase, now: now)
        }
        startReceiver(now: now)
    }

    /// Application data from the selected pair: RTP for the receiver, RTCP for both (RFC 5761 §4).
    mutating func received(_ bytes: [UInt8], now: Instant) {
        guard bytes.count >= 2 else { return }
        let isRTCP = (192...223).contains(bytes[1])
        if isRTCP {
            sender?.handle(.rtcp(bytes), now: now)
            receiver?.handle(.rtcp(bytes), now: now)
        } else if receiver != nil {
            receiver!.handle(.rtp(bytes), now: now)
        } else {
            droppedWithoutReceiver += 1
        }
    }

    mutating func stop(now: Instant) {
        stopped = true
    }

    mutating func handle(_ input: Input, now: Instant) {
        if let d = sender?.nextDeadline, d <= now { sender!.handle(.timer, now: now) }
        if let d = receiver?.nextDeadline, d <= now { receiver!.handle(.timer, now: now) }
    }

    mutating func pollOutput(now: Instant) -> Output? {
        if pendingHead < pending.count {
            defer { pendingHead += 1 }
            return pending[pendingHead]
        }
        pending.removeAll(keepingCapacity: true)
        pendingHead = 0
        if sender != nil, let out = sender!.pollOutput(now: now) {
            switch out {
            case .rtp(let bytes), .rtcp(let bytes): return .packet(bytes)
            case .event(.finished):
                senderDone = true
                return finishedIfDone()
            case .event: return pollOutput(now: now)
            }
        }
        if receiver != nil, let out = receiver!.pollOutput(now: now) {
            switch out {
            case .rtcp(let bytes): return .packet(bytes)
            case .frame(let frame):
                receivedChecksum?.add(frame)
                if let latency = receiver!.lastFrameTiming?.latency, latency >= .zero { latencies.record(latency) }
                return .frame(frame)
            case .event(.finished):
                receiverDone = true
                return finishedIfDone()
            }
        }
        return nil
    }

    private mutating func finishedIfDone() -> Output? {
        guard senderDone, receiverDone, !reportedFinished else { return nil }
        reportedFinished = true
        return .finished
    }

    var nextDeadline: Instant? {
        .earliest(sender?.nextDeadline, receiver?.nextDeadline)
    }

    public var stats: CallMediaStats {
        var s = CallMediaStats()
        if let sender {
            s.framesSent = sender.stats.framesSent
            s.packetsSent = sender.stats.packetsSent
            s.bytesSent = sender.stats.bytesSent
            s.retransmissions = sender.stats.retransmissions
            s.nacksReceived = sender.stats.nacksReceived
            s.remoteLossFraction = sender.stats.lossFraction
            s.rttMs = sender.stats.rtt?.milliseconds
        }
        s.packetsDropped = droppedWithoutReceiver
        s.sentDigest = sentChecksum.map(\.digest)
        s.sentFrames = sentChecksum?.frameCount
        if let receiver {
            s.framesReceived = receiver.stats.framesReceived
            s.packetsReceived = receiver.stats.packetsReceived
            s.bytesReceived = receiver.stats.bytesReceived
            s.lost = receiver.stats.lost
            s.recovered = receiver.stats.recovered
            s.nacksSent = receiver.stats.nacksSent
            s.plisSent = receiver.stats.plisSent
            s.packetsDropped += receiver.stats.malformed + receiver.stats.wrongPayloadType + receiver.stats.wrongSSRC
            s.receivedDigest = receivedChecksum?.digest
            if latencies.count > 0 {
                s.frameLatencyP50Ms = latencies.percentile(50).milliseconds
                s.frameLatencyP99Ms = latencies.percentile(99).milliseconds
            }
        }
        return s
    }
}

/// What the media of a call did.
public struct CallMediaStats: Sendable, Codable, Equatable {
    public var framesSent = 0
    /// Frames in the file being sent (the sent digest covers these).
    public var sentFrames: Int?
    public var packetsSent = 0
    public var bytesSent = 0
    public var retransmissions = 0
    public var nacksReceived = 0
    public var remoteLossFraction: Double?
    public var rttMs: Double?
    public var framesReceived = 0
    public var packetsReceived = 0
    public var bytesReceived = 0
    /// Packets lost for good (not repaired by retransmission).
    public var lost = 0
    public var recovered = 0
    public var nacksSent = 0
    public var plisSent = 0
    /// Media packets received and dropped: malformed, of an unexpected payload type or SSRC, or
    /// with nothing to take them.
    public var packetsDropped = 0
    public var frameLatencyP50Ms: Double?
    public var frameLatencyP99Ms: Double?
    public var sentDigest: String?
    public var receivedDigest: String?

    public init() {}

    /// Lines for the summary, or nil when there was no media.
    public var summaryText: String? {
        var lines: [String] = []
        if let sentDigest {
            lines.append("  sent                \(framesSent) frames, \(packetsSent) packets, \(bytesSent) bytes, "
                         + "\(retransmissions) retransmitted, \(nacksReceived) NACKs received; digest \(sentDigest)")
        }
        if let receivedDigest {
            var line = "  received            \(framesReceived) frames, \(packetsReceived) packets, \(lost) lost, "
                + "\(recovered) recovered, \(packetsDropped) dropped, \(nacksSent) NACKs, \(plisSent) PLIs; "
                + "digest \(receivedDigest)"
            if let p50 = frameLatencyP50Ms, let p99 = frameLatencyP99Ms {
                line += String(format: "; frame latency p50 %.1f ms, p99 %.1f ms", p50, p99)
            }
            lines.append(line)
        }
        if receivedDigest == nil, packetsDropped > 0 {
            lines.append("  received            \(packetsDropped) media packets dropped (nothing to take them)")
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// A fragment for the live progress line.
    public var progressText: String? {
        guard sentDigest != nil || receivedDigest != nil else { return nil }
        var parts: [String] = []
        if sentDigest != nil { parts.append("sent \(framesSent) frames (\(retransmissions) rtx)") }
        if receivedDigest != nil { parts.append("received \(framesReceived) frames (\(lost) lost)") }
        return parts.joined(separator: " · ")
    }
}
