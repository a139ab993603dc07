// The sending side of a video stream as a sans-I/O machine (RFC 3550 RTP/RTCP; RFC 4585
// feedback): frames in, RTP and RTCP datagrams out, driven by `now`.
//
// - Frames come in as input: the driver reads the file (or holds the frames) and hands over
//   frames while `framesWanted` is above zero, then `.endOfStream`. The sender holds at most
//   `frameLookahead` frames ahead of the one it is sending, so a long file costs the memory of a
//   few frames, and it never blocks on a read: I/O stays in the driver.
// - Pacing: `.realtime` sends frame i at start + (pts_i − pts_0), the file's own timing;
//   `.max` sends as fast as the driver drains `pollOutput`. Only the current frame's packets
//   are held, so a driver that stops draining (its socket would block) costs no memory.
// - Every packet sent is kept in a retransmission buffer; a generic NACK resends the packets it
//   names: as they were (same SSRC and sequence number, RFC 4588 §1) between zonertc peers, or
//   on the negotiated RTX stream (RFC 4588 §4: own SSRC, payload type and sequence numbers, the
//   original sequence number first in the payload) when one is configured, as browsers expect.
//   A PLI is counted and reported (frames come from a file: there is no encoder to make a
//   keyframe).
// - RTCP: a sender report (with SDES CNAME, RFC 3550 §6.1) before the first packet and every
//   `senderReportInterval`; receiver reports give loss, jitter and the round-trip time (§6.4.1).
// - Flow control (optional, for unpaced bulk transfers): with a `window`, no original packet
//   leaves more than `window` packets ahead of the highest sequence number the receiver last
//   reported (the start counting as a report of nothing), so a receiver that falls behind is not
//   flooded past its socket buffer. It lapses after `windowStallTimeout` without a report (ffmpeg
//   sends none back) until the next one.
// - The end: shortly after the last frame the sender sends SR + SDES + BYE (§6.6), repeats the BYE
//   every `byeInterval`, keeps answering NACKs, and resends the tail a receiver report shows
//   missing. It finishes when a receiver report confirms every packet arrived, when the
//   receiver says BYE, or after `drainTimeout` without feedback — with a BYE in every case.

import ZoneCore

/// Sends one video stream as RTP.
public struct MediaSender: SansIOMachine, Sendable {
    /// How frames are paced.
    public enum Pace: String, CaseIterable, Equatable, Sendable {
        /// Each frame at its pts relative to the first: the file's real time.
        case realtime
        /// As fast as the driver drains the output.
        case max
    }

    /// The sender's knobs.
    public struct Configuration: Equatable, Sendable {
        public var codec: VideoCodec
        public var ssrc: UInt32
        public var payloadType: UInt8
        public var pace: Pace
        /// The largest RTP payload (payload-format header included).
        public var maxPayloadSize: Int
        /// How many sent packets are kept for retransmission (1…32768).
        public var retransmissionCapacity: Int
        /// Packets older than this are not resent.
        public var retransmissionMaxAge: Duration
        public var senderReportInterval: Duration
        /// The first RTP sequence number (random in real sessions, RFC 3550 §5.1).
        public var initialSequenceNumber: UInt16
        /// The RTP timestamp of pts 0 (random in real sessions, RFC 3550 §5.1); a receiver that
        /// knows it recovers the original pts exactly.
        public var timestampOrigin: UInt32
        /// The SDES CNAME (RFC 3550 §6.5.1).
        public var cname: String
        /// How long after the last frame the first BYE waits, so that a receiver that stops at
        /// BYE (ffmpeg does) has taken the last packets first.
        public var byeDelay: Duration
        /// How often the BYE is repeated while the sender waits for the end of feedback.
        public var byeInterval: Duration
        /// How long after the last frame (or the last NACK) the sender waits for feedback.
        public var drainTimeout: Duration
        /// The most original packets ahead of the receiver's last report; nil: no limit.
        public var window: Int?
        /// A window without a new receiver report for this long is ignored.
        public var windowStallTimeout: Duration
        /// The RTX stream retransmissions go on (its SSRC must be set); nil resends the original
        /// packets unchanged.
        public var retransmission: RetransmissionStream?
        /// The first sequence number of the RTX stream (random in real sessions, like the
        /// original's, RFC 4588 §4 and RFC 3550 §5.1).
        public var retransmissionInitialSequenceNumber: UInt16 = 0
        /// How many frames a paced sender asks for ahead of the one it sends (at least 1), so the
        /// next due time is known; few, so memory stays bounded. Unpaced, it asks for one frame once
        /// the current frame's packets are out.
        public var frameLookahead = 2

        public init(codec: VideoCodec, ssrc: UInt32, payloadType: UInt8 = 96, pace: Pace = .realtime,
                    maxPayloadSize: Int = defaultMaxPayloadSize, retransmissionCapacity: Int = 1024,
                    retransmissionMaxAge: Duration = .seconds(2), senderReportInterval: Duration = .seconds(1),
                    initialSequenceNumber: UInt16 = 0, timestampOrigin: UInt32 = 0, cname: String = "zonertc",
                    byeDelay: Duration = .milliseconds(20), byeInterval: Duration = .milliseconds(200),
                    drainTimeout: Duration = .seconds(1), window: Int? = nil,
                    windowStallTimeout: Duration = .milliseconds(500)) {
            self.codec = codec
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.pace = pace
            self.maxPayloadSize = maxPayloadSize
            self.retransmissionCapacity = retransmissionCapacity
            self.retransmissionMaxAge = retransmissionMaxAge
            self.senderReportInterval = senderReportInterval
            self.initialSequenceNumber = initialSequenceNumber
            self.timestampOrigin = timestampOrigin
            self.cname = cname
            self.byeDelay = byeDelay
            self.byeInterval = byeInterval
            self.drainTimeout = drainTimeout
            self.window = window
            self.windowStallTimeout = windowStallTimeout
        }

        /// A configuration with random SSRC, first sequence number and timestamp origin.
        public static func random(codec: VideoCodec, using random: inout SeededRandom) -> Configuration {
            Configuration(codec: codec, ssrc: UInt32(truncatingIfNeeded: random.next()),
                          initialSequenceNumber: UInt16(truncatingIfNeeded: random.next()),
                          timestampOrigin: UInt32(truncatingIfNeeded: random.next()))
        }
    }

    /// What the driver hands the sender.
    public enum Input: Sendable {
        /// The stream's next frame, in order (the driver reads it while `framesWanted` > 0).
        case frame(VideoFrame)
        /// No frame follows (the file ended, or reading it failed): the sender ends the stream.
        case endOfStream
        /// An RTCP datagram from the receiver (compound or single).
        case rtcp([UInt8])
        /// Time passed (a deadline was reached); `now` says how far.
        case timer
    }

    /// What the sender asks the driver to do.
    public enum Output: Equatable, Sendable {
        /// Send this RTP packet to the RTP destination.
        case rtp([UInt8])
        /// Send this RTCP packet to the RTCP destination.
        case rtcp([UInt8])
        /// Something happened.
        case event(Event)
    }

    /// Things the driver may want to report.
    public enum Event: Equatable, Sendable {
        /// The receiver asked for a keyframe (PLI); a file cannot make one, so it is only reported.
        case keyframeRequested
        /// A frame could not be packetized (for example an H.264 access unit without NAL units)
        /// and was skipped.
        case frameSkipped(pts: Int64, reason: String)
        /// The stream is over: the last output.
        case finished
    }

    /// Counters and the receiver's view of the stream.
    public struct Stats: Equatable, Sendable {
        /// Frames whose packets have all been handed out.
        public var framesSent = 0
        public var framesSkipped = 0
        /// RTP packets handed out for the first time.
        public var packetsSent = 0
        /// RTP bytes (headers included) of those packets.
        public var bytesSent = 0
        /// Frame bytes carried by them.
        public var mediaBytesSent = 0
        /// Packets resent (NACKed, or the tail a receiver report showed missing).
        public var retransmissions = 0
        /// NACKed packets no longer held (too old, or overwritten).
        public var retransmissionMisses = 0
        public var nacksReceived = 0
        public var plisReceived = 0
        public var receiverReports = 0
        public var rtcpSent = 0
        /// RTCP datagrams that did not parse.
        public var malformedRTCP = 0
        /// The last reported fraction lost (0…1).
        public var lossFraction: Double?
        /// The last reported cumulative loss.
        public var cumulativeLost: Int?
        /// The last reported interarrival jitter.
        public var jitter: Duration?
        /// The last round-trip time from a report block.
        public var rtt: Duration?
        /// Whether a receiver report confirmed that every packet arrived.
        public var confirmedComplete = false
        /// How often the flow-control window held packets back.
        public var windowStalls = 0

        public init() {}
    }

    private enum Phase: Equatable {
        /// Frames remain.
        case sending
        /// Every frame is out; BYE sent. Waits for feedback until `deadline`.
        case draining(nextBye: Instant, deadline: Instant)
        case finished
    }

    public let configuration: Configuration
    /// The time base of the frames' pts.
    public let timebase: Timebase
    public private(set) var stats = Stats()

    private var packetizer: CodecPacketizer
    private var sequencer: RTPSequencer
    private var retransmission: RetransmissionBuffer
    private var phase = Phase.sending
    private let start: Instant
    private var lastNow: Instant
    private var firstPTS: Int64?
    /// The frames handed in and not yet packetized; `queueHead` is the next. The first is read
    /// ahead so its due time is known.
    private var queue: [VideoFrame] = []
    private var queueHead = 0
    /// Whether `.endOfStream` came: no frame follows those queued.
    private var endOfStream = false
    /// The current frame's packets; `packetHead` is the next to hand out.
    private var packets: [RTPPacket] = []
    private var packetHead = 0
    private var currentFrameBytes = 0
    /// Sequence numbers to resend, in order, without repeats.
    private var resend: [UInt16] = []
    private var resendHead = 0
    private var resendQueued = Set<UInt16>()
    private var rtcp = OutputQueue<[UInt8]>()
    private var events = OutputQueue<Event>()
    private var nextSenderReport: Instant
    /// The sequence number and RTP timestamp of the last original packet.
    private var lastSequence: UInt16?
    private var lastTimestamp: UInt32
    /// When the tail was last resent for a receiver report, to resend it at most once per BYE interval.
    private var lastTailResend: Instant?
    /// How many original packets the receiver reported, by its extended highest sequence number,
    /// and when (for the flow-control window).
    private var reportedThrough = 0
    private var lastReport: Instant
    private var windowHeld = false
    /// The SSRC of whoever reports on our stream (from its report blocks about us).
    private var receiverSSRC: UInt32?
    /// The compact NTP times of the sender reports sent with a BYE.
    private var goodbyeReports = Set<UInt32>()
    /// The next sequence number of the RTX stream.
    private var nextRetransmissionSequence: UInt16

    /// A sender of `frames`, all handed in at once with the end of the stream (frames already in
    /// memory; a driver reading a file feeds `.frame` inputs instead), starting at `now`.
    public init(configuration: Configuration, frames: [VideoFrame], timebase: Timebase, now: Instant) {
        self.init(configuration: configuration, timebase: timebase, now: now)
        for frame in frames { enqueue(frame) }
        endOfStream = true
    }

    /// A sender starting at `now` whose frames the driver hands in (`framesWanted`).
    public init(configuration: Configuration, timebase: Timebase, now: Instant) {
        precondition(configuration.payloadType < 128, "an RTP payload type is 7 bits")
        self.configuration = configuration
        self.timebase = timebase
        packetizer = configuration.codec.packetizer(maxPayloadSize: configuration.maxPayloadSize)
        sequencer = RTPSequencer(ssrc: configuration.ssrc, payloadType: configuration.payloadType,
                                 initialSequenceNumber: configuration.initialSequenceNumber,
                                 timestampOffset: configuration.timestampOrigin)
        retransmission = RetransmissionBuffer(capacity: configuration.retransmissionCapacity,
                                              maxAge: configuration.retransmissionMaxAge)
        start = now
        lastNow = now
        nextSenderReport = now
        lastReport = now
        lastTimestamp = configuration.timestampOrigin
        nextRetransmissionSequence = configuration.retransmissionInitialSequenceNumber
    }

    /// Whether the sender has finished (after its `.finished` event).
    public var isFinished: Bool { phase == .finished && events.isEmpty }

    /// How many more frames the driver should hand in now (0 once the stream has ended).
    public var framesWanted: Int {
        guard phase == .sending, !endOfStream else { return 0 }
        let queued = queue.count - queueHead
        // Unpaced, one frame at a time once the current one's packets are out (it is due at once
        // anyway): reading sooner would only hold more memory.
        if configuration.pace == .max { return packetHead < packets.count || queued > 0 ? 0 : 1 }
        return max(0, max(1, configuration.frameLookahead) - queued)
    }

    // MARK: Input

    public mutating func handle(_ input: Input, now: Instant) {
        lastNow = max(lastNow, now)
        switch input {
        case .timer:
            break
        case .frame(let frame):
            // A frame after the end, or after the stream finished, is the driver's mistake: ignored.
            guard phase == .sending, !endOfStream else { return }
            enqueue(frame)
        case .endOfStream:
            endOfStream = true
        case .rtcp(let bytes):
            guard let packets = try? RTCPPacket.parseCompound(bytes) else {
                stats.malformedRTCP += 1
                return
            }
            for packet in packets { receive(packet, now: now) }
        }
        advance(now: now)
    }

    private mutating func receive(_ packet: RTCPPacket, now: Instant) {
        let ssrc = configuration.ssrc
        switch packet {
        case .nack(let nack) where nack.mediaSSRC == ssrc:
            stats.nacksReceived += 1
            for sequence in nack.lostSequenceNumbers { queueResend(sequence, now: now) }
            extendDrain(now: now)
        case .pictureLossIndication(let pli) where pli.mediaSSRC == ssrc:
            stats.plisReceived += 1
            events.append(.keyframeRequested)
        case .receiverReport(let rr):
            for block in rr.reports where block.ssrc == ssrc {
                receiverSSRC = rr.ssrc
                report(block, now: now)
            }
        case .senderReport(let sr):
            for block in sr.reports where block.ssrc == ssrc {
                receiverSSRC = sr.ssrc
                report(block, now: now)
            }
        case .goodbye(let bye):
            // Our receiver leaving ends the wait for feedback; another source's BYE (the other
            // direction of a call ending its own stream) does not.
            if let receiverSSRC, bye.sources.contains(receiverSSRC), case .draining = phase { finish(now: now) }
        default:
            break  // SDES, feedback about other sources
        }
    }

    private mutating func report(_ block: RTCPReportBlock, now: Instant) {
        stats.receiverReports += 1
        // Packets up to the reported one, counted from our first (32-bit extended arithmetic).
        let through = Int(block.extendedHighestSequence &- UInt32(configuration.initialSequenceNumber)) + 1
        if through <= stats.packetsSent { reportedThrough = max(reportedThrough, through) }
        lastReport = now
        stats.lossFraction = Double(block.fractionLost) / 256
        stats.cumulativeLost = Int(block.cumulativeLost)
        stats.jitter = .nanoseconds(Int64(block.jitter) * 1_000_000_000 / VideoCodec.clockRate)
        if let rtt = NTPTimestamp.roundTripTime(now: now, lastSenderReport: block.lastSenderReport,
                                                delaySinceLastSenderReport: block.delaySinceLastSenderReport) {
            stats.rtt = rtt
        }
        guard case .draining = phase, let last = lastSequence else { return }
        let highest = UInt16(truncatingIfNeeded: block.extendedHighestSequence)
        if highest == last && block.cumulativeLost <= 0 {
            stats.confirmedComplete = true
            finish(now: now)
        } else if highest != last, goodbyeReports.contains(block.lastSenderReport),
                  lastTailResend.map({ now - $0 >= configuration.byeInterval }) ?? true {
            // A report written after our BYE (it echoes the sender report sent with it) has not
            // seen the end of the stream: resend the tail it is missing. Earlier reports only lag.
            lastTailResend = now
            let missing = Int(last &- highest)
            if missing <= configuration.retransmissionCapacity {
                for i in 1...missing { queueResend(highest &+ UInt16(i), now: now) }
            }
            extendDrain(now: now)
        }
    }

    private mutating func queueResend(_ sequence: UInt16, now: Instant) {
        guard !resendQueued.contains(sequence) else { return }
        guard retransmission.packet(sequenceNumber: sequence, now: now) != nil else {
            stats.retransmissionMisses += 1
            return
        }
        resendQueued.insert(sequence)
        resend.append(sequence)
    }

    private mutating func extendDrain(now: Instant) {
        if case .draining(let nextBye, _) = phase {
            phase = .draining(nextBye: nextBye, deadline: now + configuration.drainTimeout)
        }
    }

    // MARK: Output

    /// The next datagram or event, or nil when nothing is due before `nextDeadline` (or until the
    /// next frame, when `framesWanted` > 0).
    public mutating func pollOutput() -> Output? {
        let now = lastNow
        // Packetizes the next frame once the current one is out (it may be due at `now` already).
        advance(now: now)
        if let packet = rtcp.pop() {
            stats.rtcpSent += 1
            return .rtcp(packet)
        }
        while resendHead < resend.count {
            let sequence = resend[resendHead]
            resendHead += 1
            resendQueued.remove(sequence)
            if resendHead == resend.count {
                resend.removeAll(keepingCapacity: true)
                resendHead = 0
            }
            if let packet = retransmission.packet(sequenceNumber: sequence, now: now) {
                stats.retransmissions += 1
                return .rtp(retransmitted(packet).serialized())
            }
            stats.retransmissionMisses += 1
        }
        if packetHead < packets.count && !windowCloses(now: now) {
            return .rtp(nextOriginalPacket(now: now))
        }
        // `.finished` is always last; other events come as they happen.
        if let event = events.pop() { return .event(event) }
        return nil
    }

    /// When the sender next has something to do if nothing arrives: now if output is waiting.
    public var nextDeadline: Instant? {
        if phase == .finished { return events.isEmpty ? nil : lastNow }
        if !rtcp.isEmpty || resendHead < resend.count || !events.isEmpty { return lastNow }
        if packetHead < packets.count {
            // Held by the window: a report opens it; else it lapses after the stall timeout.
            guard windowHeld else { return lastNow }
            return min(nextSenderReport, lastReport + configuration.windowStallTimeout)
        }
        var deadline = nextSenderReport
        switch phase {
        case .sending:
            guard queueHead < queue.count else {
                // At the end, the next poll starts the drain at once; else the next frame is awaited
                // (the first one before anything, even the first sender report).
                if endOfStream { return lastNow }
                return firstPTS == nil ? nil : deadline
            }
            deadline = min(deadline, due(queue[queueHead]))
        case .draining(let nextBye, let end):
            deadline = min(deadline, nextBye, end)
        case .finished:
            break
        }
        return deadline
    }

    /// `packet` as it goes out again: on the RTX stream when there is one, else unchanged.
    private mutating func retransmitted(_ packet: RTPPacket) -> RTPPacket {
        guard let rtx = configuration.retransmission, let ssrc = rtx.ssrc else { return packet }
        defer { nextRetransmissionSequence &+= 1 }
        return packet.retransmission(ssrc: ssrc, payloadType: rtx.payloadType,
                                     sequenceNumber: nextRetransmissionSequence)
    }

    /// Whether the flow-control window holds the next original packet back now.
    private mutating func windowCloses(now: Instant) -> Bool {
        guard let window = configuration.window, now - lastReport < configuration.windowStallTimeout,
              stats.packetsSent - reportedThrough >= window else {
            windowHeld = false
            return false
        }
        if !windowHeld { stats.windowStalls += 1 }
        windowHeld = true
        return true
    }

    private mutating func nextOriginalPacket(now: Instant) -> [UInt8] {
        let packet = packets[packetHead]
        packetHead += 1
        retransmission.store(packet, now: now)
        let bytes = packet.serialized()
        stats.packetsSent += 1
        stats.bytesSent += bytes.count
        lastSequence = packet.sequenceNumber
        lastTimestamp = packet.timestamp
        if packetHead == packets.count {
            // The next frame is packetized at the next poll, not now, so this packet leaves first.
            stats.framesSent += 1
            stats.mediaBytesSent += currentFrameBytes
            packets.removeAll(keepingCapacity: true)
            packetHead = 0
        }
        return bytes
    }

    // MARK: Time

    /// The instant frame `frame` is due under the pacing.
    private func due(_ frame: VideoFrame) -> Instant {
        guard configuration.pace == .realtime, let firstPTS else { return start }
        return start + Self.duration(frame.pts - firstPTS, timebase)
    }

    /// `ticks` of `timebase` as a duration, without overflow for any realistic stream.
    static func duration(_ ticks: Int64, _ timebase: Timebase) -> Duration {
        guard timebase.denominator > 0, ticks > 0 else { return .zero }
        let (total, overflow) = ticks.multipliedReportingOverflow(by: Int64(timebase.numerator))
        guard !overflow else { return .seconds(Int64.max / 1_000_000_000) }
        let denominator = Int64(timebase.denominator)
        let seconds = total / denominator
        let rest = (total % denominator) * 1_000_000_000 / denominator
        return .seconds(seconds) + .nanoseconds(rest)
    }

    private mutating func advance(now: Instant) {
        switch phase {
        case .finished:
            return
        case .sending:
            // Wait for the first frame before the first sender report, whose media time counts from it.
            guard firstPTS != nil || endOfStream else { return }
            if now >= nextSenderReport { queueSenderReport(now: now, goodbye: false) }
            // Packetize the next frame once the current one is out and the next is due (a frame
            // that cannot be packetized is skipped, and the one after it considered).
            while packetHead == packets.count {
                guard queueHead < queue.count else {
                    if endOfStream { startDraining(now: now) }
                    return
                }
                let frame = queue[queueHead]
                guard now >= due(frame) else { return }
                queueHead += 1
                if queueHead == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    queueHead = 0
                }
                packetize(frame)
            }
        case .draining(let nextBye, let deadline):
            if now >= deadline {
                finish(now: now)
            } else if now >= nextBye {
                queueSenderReport(now: now, goodbye: true)
                phase = .draining(nextBye: now + configuration.byeInterval, deadline: deadline)
            } else if now >= nextSenderReport {
                queueSenderReport(now: now, goodbye: false)
            }
        }
    }

    private mutating func enqueue(_ frame: VideoFrame) {
        if firstPTS == nil { firstPTS = frame.pts }
        queue.append(frame)
    }

    private mutating func packetize(_ frame: VideoFrame) {
        do {
            let chunks = try packetizer.packetize(frame.bytes)
            let mediaTime = timebase.convert(frame.pts, toClockRate: VideoCodec.clockRate)
            packets = sequencer.packets(for: chunks, mediaTimestamp: mediaTime)
            packetHead = 0
            currentFrameBytes = frame.bytes.count
        } catch {
            stats.framesSkipped += 1
            events.append(.frameSkipped(pts: frame.pts, reason: error.description))
        }
    }

    private mutating func startDraining(now: Instant) {
        phase = .draining(nextBye: now + configuration.byeDelay, deadline: now + configuration.drainTimeout)
        advance(now: now)  // a zero delay says BYE at once
    }

    private mutating func finish(now: Instant) {
        guard phase != .finished else { return }
        // A sender leaves with a BYE (RFC 3550 §6.6) even when a report confirmed the stream
        // before the delayed first one went out: a receiver that ends on BYE would otherwise wait
        // out its idle timeout.
        if goodbyeReports.isEmpty { queueSenderReport(now: now, goodbye: true) }
        phase = .finished
        packets.removeAll()
        queue.removeAll()
        queueHead = 0
        resend.removeAll()
        resendHead = 0
        resendQueued.removeAll()
        events.append(.finished)
    }

    /// SR + SDES (+ BYE): the sender's RTCP compound packet (RFC 3550 §6.1).
    private mutating func queueSenderReport(now: Instant, goodbye: Bool) {
        let ssrc = configuration.ssrc
        var compound: [RTCPPacket] = [
            .senderReport(RTCPSenderReport(ssrc: ssrc, ntpTimestamp: NTPTimestamp.from(now),
                                           rtpTimestamp: rtpTimestamp(at: now),
                                           packetCount: UInt32(truncatingIfNeeded: stats.packetsSent),
                                           octetCount: UInt32(truncatingIfNeeded: stats.bytesSent))),
            .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: configuration.cname)),
        ]
        if goodbye {
            compound.append(.goodbye(RTCPGoodbye(sources: [ssrc], reason: "end of stream")))
            goodbyeReports.insert(NTPTimestamp.compact(now))
        }
        rtcp.append(RTCPPacket.serializeCompound(compound))
        nextSenderReport = now + configuration.senderReportInterval
    }

    /// The RTP timestamp that corresponds to `now`: under real-time pacing the media clock runs
    /// with the wall clock from the first frame; unpaced, it is the last frame's timestamp.
    private func rtpTimestamp(at now: Instant) -> UInt32 {
        guard configuration.pace == .realtime, let firstPTS else { return lastTimestamp }
        let first = timebase.convert(firstPTS, toClockRate: VideoCodec.clockRate)
        let elapsed = max(0, (now - start).nanoseconds) / 1000 * (VideoCodec.clockRate / 10_000) / 100
        return configuration.timestampOrigin &+ UInt32(truncatingIfNeeded: first &+ elapsed)
    }
}
