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
import SDP
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
    /// With `pace: .max`: the most packets the sender runs ahead of what the receiver last
    /// reported (MediaSender's flow control, as `zonertc media send --window` has it), so a
    /// receiver short of CPU is not flooded past its socket buffer into losses NACKs come too late
    /// for. A receiver that reports less often (a browser) only slows it: the window lapses after
    /// half a second without a report. nil: no window.
    public var window: Int? = 2048
    /// How long a frame may wait for retransmissions.
    public var jitterBufferLatency: Duration
    /// The received stream ends after this many frames, BYE or not (a browser's fake camera
    /// loops its file and never says BYE); nil: at the sender's BYE.
    public var receiveFrames: Int?

    public init(send: Outgoing? = nil, receive: Bool = false, pace: MediaSender.Pace = .realtime,
                jitterBufferLatency: Duration = .milliseconds(200), receiveFrames: Int? = nil) {
        self.send = send
        self.receive = receive
        self.pace = pace
        self.jitterBufferLatency = jitterBufferLatency
        self.receiveFrames = receiveFrames
    }
}

/// The media side of a call, sans-I/O: a composite of the sender and the receiver, drained in
/// one place (`pollOutput`), sender first.
public struct CallMedia: SansIOMachine {
    /// What the call tells its media.
    public enum Input: Sendable {
        /// Our own description was set: the SSRCs and payload types it announced.
        case localDescription(SessionDescription)
        /// The remote's description was applied: the payload type for our codec, the remote's
        /// stream format; the receiver starts here, before ICE completes, so no first packet is missed.
        case remoteDescription(SessionDescription)
        /// A pair is selected (and secured): the streams start (once).
        case connected
        /// Application data from the selected pair: RTP for the receiver, RTCP for both (RFC 5761 §4).
        case packet([UInt8])
        /// The call hangs up: no stream starts, nothing more goes out.
        case stop
        /// `nextDeadline` was reached.
        case timer
    }

    public enum Output: Sendable {
        /// An RTP or RTCP packet for the selected pair.
        case packet([UInt8])
        /// A received frame, in order, with its original timestamp.
        case frame(VideoFrame)
        /// Every stream this peer takes part in is done.
        case finished
    }

    /// A stream this peer takes part in.
    private enum Stream: Hashable {
        case sending, receiving
    }

    /// Where the media is in its life.
    private enum Phase: Equatable {
        /// Streams run (or wait for a pair); `awaiting` are those that have not finished yet.
        case streaming(awaiting: Set<Stream>)
        /// Every stream finished and `.finished` was handed out.
        case finished
        /// The call hung up: inputs are ignored and nothing more goes out.
        case stopped
    }

    /// Whether the call hung up.
    private var isStopped: Bool {
        if case .stopped = phase { true } else { false }
    }

    static let formatAttribute = "x-zonertc-format"
    static let originAttribute = "x-zonertc-rtp-origin"
    /// The first sequence number we send: a receiver that knows it NACKs the loss of the first
    /// packets too, and counts the end of the stream exactly from the sender's last report.
    static let firstSequenceAttribute = "x-zonertc-first-sequence"

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
    /// The payload types of our own description's video section. As answerer we may send only
    /// what our answer kept of the offer (RFC 3264 §6.1): an offer listing two H.264 profiles
    /// (aiortc: 99 at 42001f, 101 at 42e01f) is answered with one, and the offerer drops the other.
    private var localPayloadTypes: Set<UInt8>?
    /// The remote's video codecs, in its order, from which `remotePayloadType` is chosen.
    private var remoteCodecs: [RTPCodec] = []
    private var remoteVideo: RemoteVideoDescription?
    /// What the receiver takes when the remote's description pins it: payload type, SSRC, RTX.
    private var receiveStream: (payloadType: UInt8?, ssrc: UInt32?, retransmission: RetransmissionStream?)
        = (nil, nil, nil)
    /// The source our stream goes from, once there is a sender (or our description announced it).
    public var localSource: UInt32? { sender?.configuration.ssrc ?? announcedSources?.ssrc }
    /// The remote's source, when its description announced it or our receiver took its stream.
    public var remoteSource: UInt32? { receiver?.remoteSSRC ?? receiveStream.ssrc }
    /// The remote's stream format (from its SDP), when it sends.
    public private(set) var remoteFormat: VideoStreamFormat?
    /// The remote's RTP timestamp of its first frame's pts (from its SDP), when it names one.
    public private(set) var remoteOrigin: RTPTimestampOrigin?
    /// The RTP timestamp of pts 0 of what we send, chosen at the start so our descriptions can
    /// name it (RFC 3550 §5.1: random).
    private let sendTimestampZero: UInt32
    /// The first sequence number of what we send, chosen at the start for the same reason.
    private let sendFirstSequence: UInt16
    /// The remote's first sequence number (from its SDP), when it names a valid one.
    private var remoteFirstSequence: UInt16?
    private var sentChecksum: FrameChecksum?
    private var receivedChecksum: FrameChecksum?
    private var phase: Phase
    /// The instant of the last input: frames handed to the sender while output is drained go in then.
    private var lastNow = Instant.zero
    /// The next of `configuration.send.frames` to hand the sender.
    private var nextFrame = 0
    private var latencies = LatencyHistogram()
    /// Media packets that arrived with nothing to take them (no receiver: this peer does not
    /// record, or the sender's format is unknown).
    private var droppedWithoutReceiver = 0
    /// Why this peer's media cannot work with the remote description (the call fails with it).
    public private(set) var problem: String?

    init(configuration: CallMediaConfiguration, seed: UInt64) {
        self.configuration = configuration
        isActive = configuration.send != nil || configuration.receive
        random = SeededRandom(seed: seed ^ 0x6D65_6469_61)
        // A stream of its own, so the other random choices stay what they were.
        var originRandom = SeededRandom(seed: seed ^ 0x6F72_6967_696E)
        sendTimestampZero = UInt32(truncatingIfNeeded: originRandom.next())
        sendFirstSequence = UInt16(truncatingIfNeeded: originRandom.next())
        if let send = configuration.send {
            sentChecksum = FrameChecksum.of(send.frames, codec: send.format.codec)
        }
        var streams = Set<Stream>()
        if configuration.send != nil { streams.insert(.sending) }
        if configuration.receive { streams.insert(.receiving) }
        phase = .streaming(awaiting: streams)
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
        attributes.append(.other(name: Self.firstSequenceAttribute, value: String(sendFirstSequence)))
        return attributes
    }

    /// Whether this peer sends or receives anything (fixed by the configuration: without it there
    /// is never a sender or a receiver, so never a deadline).
    public let isActive: Bool

    // MARK: Input

    public mutating func handle(_ input: Input, now: Instant) {
        defer { updateDeadline() }
        guard !isStopped else { return }
        lastNow = max(lastNow, now)
        switch input {
        // A call without media (signaling and ICE only, as the simulator's) has nothing to read in
        // the descriptions: what they choose is for a sender or receiver it will never make.
        case .localDescription(let description):
            if isActive { setLocalDescription(description) }
        case .remoteDescription(let description):
            if isActive { setRemoteDescription(description, now: now) }
        case .connected:
            connect(now: now)
        case .packet(let bytes):
            receive(bytes, now: now)
        case .stop:
            phase = .stopped
            return
        case .timer:
            break
        }
        // Time reaches the parts whose deadline came, whatever the input (a call without media has
        // neither part).
        guard isActive else { return }
        if let d = sender?.nextDeadline, d <= now { sender?.handle(.timer, now: now) }
        if let d = receiver?.nextDeadline, d <= now { receiver?.handle(.timer, now: now) }
    }

    /// Our own description: the SSRCs it announced (none in today's dialect).
    private mutating func setLocalDescription(_ description: SessionDescription) {
        let section = description.media.first { $0.kind == .video && !$0.isRejected }
        announcedSources = section?.sendingSources
        localPayloadTypes = section.map { Set($0.codecs.map(\.payloadType)) }
        chooseSendPayloadType()
        repinReceiveStream()
    }

    /// Answering a browser, the receiver was pinned to the offer's first codec we can record; if
    /// our answer kept another payload type of that codec (an H.264 profile), the remote sends that
    /// one: pin it instead. No media arrives before a pair is selected, where the receiver restarts.
    private mutating func repinReceiveStream() {
        guard let pinned = receiveStream.payloadType, let local = localPayloadTypes, !local.contains(pinned),
              let name = remoteCodecs.first(where: { $0.payloadType == pinned })?.name.lowercased(),
              let kept = remoteCodecs.first(where: { $0.name.lowercased() == name && local.contains($0.payloadType) })
        else { return }
        receiveStream.payloadType = kept.payloadType
        receiveStream.retransmission = remoteVideo?.retransmissionPayloadType(for: kept.payloadType).map {
            RetransmissionStream(ssrc: remoteVideo?.retransmissionSSRC, payloadType: $0)
        }
        receiver = nil
    }

    /// The payload type we send our codec at: the remote's first of that name that our own
    /// description also lists (else its first of that name, else its first codec).
    private mutating func chooseSendPayloadType() {
        guard let send = configuration.send, !remoteCodecs.isEmpty else { return }
        let name = send.format.codec.encodingName.lowercased()
        let named = remoteCodecs.filter { $0.name.lowercased() == name }
        let agreed = named.first { localPayloadTypes?.contains($0.payloadType) ?? true }
        remotePayloadType = (agreed ?? named.first ?? remoteCodecs.first)?.payloadType
        remoteRetransmissionPayloadType = remotePayloadType.flatMap { remoteVideo?.retransmissionPayloadType(for: $0) }
    }

    /// The remote's description: the payload type for our codec, the remote's stream format; the
    /// receiver starts here, before ICE completes, so the first packets are never missed.
    private mutating func setRemoteDescription(_ description: SessionDescription, now: Instant) {
        guard let section = description.media.first(where: { $0.kind == .video && !$0.isRejected }) else { return }
        let remote = try? RemoteVideoDescription(description)
        remoteCodecs = section.codecs
        remoteVideo = remote
        chooseSendPayloadType()
        var formatProblem = "the sender's description has no a=\(Self.formatAttribute)"
        var originProblem: String?
        for attribute in section.attributes {
            if case .other(let name, let value) = attribute, name == Self.formatAttribute {
                do {
                    remoteFormat = try VideoStreamFormat(attributeValue: value ?? "")
                } catch {
                    formatProblem = "the sender's a=\(Self.formatAttribute) is unusable: \(error)"
                }
            } else if case .other(let name, let value) = attribute, name == Self.firstSequenceAttribute {
                remoteFirstSequence = value.flatMap { UInt16($0) }  // anything else: not known
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
        guard receiver == nil, configuration.receive, let format = remoteFormat else { return }
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
        rc.firstSequenceNumber = remoteFirstSequence
        rc.frameLimit = configuration.receiveFrames
        receiver = MediaReceiver(configuration: rc, now: now)
    }

    /// A pair is selected: streams start (once).
    private mutating func connect(now: Instant) {
        if sender == nil, let send = configuration.send {
            var sc = MediaSender.Configuration.random(codec: send.format.codec, using: &random)
            sc.payloadType = remotePayloadType ?? 96
            sc.timestampOrigin = sendTimestampZero
            sc.initialSequenceNumber = sendFirstSequence
            sc.pace = configuration.pace
            if configuration.pace == .max { sc.window = configuration.window }
            if let announced = announcedSources {
                sc.ssrc = announced.ssrc
                if let rtxSSRC = announced.retransmissionSSRC, let rtxType = remoteRetransmissionPayloadType {
                    sc.retransmission = RetransmissionStream(ssrc: rtxSSRC, payloadType: rtxType)
                    sc.retransmissionInitialSequenceNumber = UInt16(truncatingIfNeeded: random.next())
                }
            }
            sender = MediaSender(configuration: sc, timebase: send.format.timebase, now: now)
        }
        startReceiver(now: now)
    }

    /// Application data from the selected pair: RTP for the receiver, RTCP for both (RFC 5761 §4).
    private mutating func receive(_ bytes: [UInt8], now: Instant) {
        guard bytes.count >= 2 else { return }
        let isRTCP = (192...223).contains(bytes[1])
        if isRTCP {
            sender?.handle(.rtcp(bytes), now: now)
            receiver?.handle(.rtcp(bytes), now: now)
        } else if receiver != nil {
            receiver?.handle(.rtp(bytes), now: now)
        } else {
            droppedWithoutReceiver += 1
        }
    }

    // MARK: Output

    /// The next packet, frame or `.finished`: the sender's output first, then the receiver's.
    public mutating func pollOutput() -> Output? {
        // A call without media has nothing to drain; the call polls at every step.
        guard isActive, !isStopped else { return nil }
        if let output = nextOutput() { return output }
        updateDeadline()
        return nil
    }

    private mutating func nextOutput() -> Output? {
        while sender != nil {
            feedSender()
            guard let output = sender?.pollOutput() else { break }
            switch output {
            case .rtp(let bytes), .rtcp(let bytes):
                return .packet(bytes)
            case .event(.finished):
                if let finished = streamFinished(.sending) { return finished }
            case .event(.keyframeRequested), .event(.frameSkipped):
                break  // counted in the sender's stats: a file has no encoder to make a keyframe
            }
        }
        while let output = receiver?.pollOutput() {
            switch output {
            case .rtcp(let bytes):
                return .packet(bytes)
            case .frame(let frame):
                receivedChecksum?.add(frame)
                if let latency = receiver?.lastFrameTiming?.latency, latency >= .zero { latencies.record(latency) }
                return .frame(frame)
            case .event(.finished):
                if let finished = streamFinished(.receiving) { return finished }
            }
        }
        return nil
    }

    /// When the media next wants `.timer`: worked out as each input ends and once its output is drained.
    public private(set) var nextDeadline: Instant?

    private mutating func updateDeadline() {
        nextDeadline = isActive && !isStopped ? .earliest(sender?.nextDeadline, receiver?.nextDeadline) : nil
    }

    /// Hands the sender the file's frames as far ahead as it asks, then the end of the stream.
    private mutating func feedSender() {
        guard let frames = configuration.send?.frames else { return }
        while let wanted = sender?.framesWanted, wanted > 0 {
            if nextFrame < frames.count {
                sender?.handle(.frame(frames[nextFrame]), now: lastNow)
                nextFrame += 1
            } else {
                sender?.handle(.endOfStream, now: lastNow)
            }
        }
    }

    /// `.finished` once the last stream this peer takes part in has ended.
    private mutating func streamFinished(_ stream: Stream) -> Output? {
        guard case .streaming(var awaiting) = phase else { return nil }
        awaiting.remove(stream)
        guard awaiting.isEmpty else {
            phase = .streaming(awaiting: awaiting)
            return nil
        }
        phase = .finished
        return .finished
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
            s.framesBeforeKeyframe = receiver.stats.framesBeforeKeyframe
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
    /// Frames dropped, not recorded, because no keyframe had come yet (a sender that names no first
    /// sequence number, so the stream may have been joined midway).
    public var framesBeforeKeyframe = 0
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
            let skipped = framesBeforeKeyframe > 0 ? " (\(framesBeforeKeyframe) before the first keyframe skipped)" : ""
            var line = "  received            \(framesReceived) frames\(skipped), \(packetsReceived) packets, "
                + "\(lost) lost, \(recovered) recovered, \(packetsDropped) dropped, \(nacksSent) NACKs, "
                + "\(plisSent) PLIs; digest \(receivedDigest)"
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
