// The receiving side of a video stream as a sans-I/O machine (RFC 3550 RTP/RTCP; RFC 4585
// feedback): datagrams in, frames and RTCP out, driven by `now`.
//
// - Packets are checked (parse, payload type, SSRC; garbage is counted and dropped), put in a
//   jitter buffer that emits complete frames in order, and tracked by a NACK generator that
//   asks for what is missing (generic NACK, RFC 4585 §6.2.1) within a retry budget. What the
//   jitter buffer gives up on is lost for good and answered with a PLI (§6.3.1), at most one
//   per `pictureLossInterval`.
// - Retransmissions on a negotiated RTX stream (RFC 4588 §4: own SSRC and payload type, the
//   original sequence number first in the payload) are turned back into the original packets
//   and handled as if they had come on the stream; RTX packets without payload (bandwidth-probe
//   padding) are counted and dropped.
// - Frames come out with their original pts: the RTP timestamp, unwrapped, minus the sender's
//   timestamp origin (or the first frame's timestamp), converted to the stream's time base.
// - RTCP: a receiver report (RFC 3550 §6.4.2, with loss, extended highest sequence, jitter,
//   LSR/DLSR) with SDES CNAME every `receiverReportInterval`, at once when the sender says BYE,
//   and at the end.
// - A receiver that joined midway — it was not told the sender's first sequence number (a
//   browser, aiortc), so the stream may start at any packet — records nothing before the first
//   keyframe (VP8: the P bit of the payload header, RFC 7741 §4.3; H.264: an IDR, RFC 6184): the
//   frames before it cannot be decoded. They are counted, and it asks for a keyframe with PLIs
//   (RFC 4585 §6.3.1) until one comes: at once for a skipped frame if none went out in the last
//   `pictureLossInterval`, and on its own deadline `pictureLossInterval` after the sender's SSRC
//   became known (configured, or the stream taken on) and after each PLI — so a sender that sends
//   nothing decodable, or a lost PLI, is asked again. A PLI names the media source (§6.1): none
//   before its SSRC is known. The first keyframe ends these requests. A receiver that knows the
//   first sequence number repairs the loss of the first packets with NACKs instead.
// - The end: after the sender's BYE, once nothing is missing or buffered and no packet has
//   arrived for `finishGrace`, the receiver says BYE itself and reports `.finished` — or at once
//   after `frameLimit` frames, for a sender that never says BYE (a browser's looping camera).

import ZoneCore

/// Receives one video stream from RTP.
public struct MediaReceiver: SansIOMachine, Sendable {
    /// The receiver's knobs.
    public struct Configuration: Equatable, Sendable {
        public var codec: VideoCodec
        /// The receiver's own SSRC, for its RTCP.
        public var ssrc: UInt32
        /// The payload type to accept; nil takes the first one seen.
        public var payloadType: UInt8?
        /// The sender's SSRC; nil learns it from the first valid packet.
        public var remoteSSRC: UInt32?
        /// How long a frame may wait for missing packets (NACK repairs must fit in it).
        public var jitterBufferLatency: Duration
        /// How long the stream start waits for packets reordered ahead of the first.
        public var startupDelay: Duration
        public var maxBufferedPackets: Int
        /// NACKs per missing packet and their spacing.
        public var nack: NackConfiguration
        /// The round-trip estimate that spaces repeated NACKs (RTP receivers cannot measure it).
        public var roundTripTime: Duration
        public var receiverReportInterval: Duration
        /// Also report after this many packets (fast streams: the sender's flow-control window
        /// advances with the reports); nil: by time only.
        public var receiverReportPackets: Int?
        /// The least time between two PLIs, and the period of the PLIs that ask for the first
        /// keyframe (zero or less: those PLIs go out only for skipped frames).
        public var pictureLossInterval: Duration
        /// The time base of the output pts.
        public var timebase: Timebase
        /// The RTP timestamp of pts `firstPTS` if known (the sender's `timestampOrigin` when
        /// `firstPTS` is 0, see `RTPTimestampOrigin`); nil: the first frame gets pts `firstPTS`.
        public var timestampOrigin: UInt32?
        /// The sender's first sequence number if known: the stream starts there without waiting,
        /// and the loss of its first packets is repaired like any other.
        public var firstSequenceNumber: UInt16?
        /// The pts of the frame stamped `timestampOrigin` (or of the first frame without one).
        public var firstPTS: Int64
        /// How long after the last arrival a BYE'd stream is considered over.
        public var finishGrace: Duration
        /// The stream ends once this many frames were handed out, BYE or not (a sender whose
        /// stream never ends by itself: a browser's fake camera loops its file); nil: no limit.
        public var frameLimit: Int?
        public var cname: String
        /// The sender's RTX stream (payload type, and SSRC when announced); nil: none.
        public var retransmission: RetransmissionStream?

        public init(codec: VideoCodec, ssrc: UInt32, payloadType: UInt8? = nil, remoteSSRC: UInt32? = nil,
                    jitterBufferLatency: Duration = .milliseconds(200), startupDelay: Duration = .milliseconds(10),
                    maxBufferedPackets: Int = 16384,
                    nack: NackConfiguration = NackConfiguration(maxRetries: 10,
                                                                minimumResendInterval: .milliseconds(10),
                                                                reorderingDelay: .milliseconds(2), maxMissing: 4000),
                    roundTripTime: Duration = .milliseconds(30), receiverReportInterval: Duration = .seconds(1),
                    pictureLossInterval: Duration = .milliseconds(500),
                    timebase: Timebase = Timebase(numerator: 1, denominator: 90_000),
                    timestampOrigin: UInt32? = nil, firstSequenceNumber: UInt16? = nil, firstPTS: Int64 = 0,
                    finishGrace: Duration = .milliseconds(100),
                    cname: String = "zonertc-receiver") {
            self.codec = codec
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.remoteSSRC = remoteSSRC
            self.jitterBufferLatency = jitterBufferLatency
            self.startupDelay = startupDelay
            self.maxBufferedPackets = maxBufferedPackets
            self.nack = nack
            self.roundTripTime = roundTripTime
            self.receiverReportInterval = receiverReportInterval
            self.receiverReportPackets = 256
            self.pictureLossInterval = pictureLossInterval
            self.timebase = timebase
            self.timestampOrigin = timestampOrigin
            self.firstSequenceNumber = firstSequenceNumber
            self.firstPTS = firstPTS
            self.finishGrace = finishGrace
            self.cname = cname
        }
    }

    /// What the driver hands the receiver.
    public enum Input: Sendable {
        /// A datagram from the RTP port. RTCP arriving there (rtcp-mux, RFC 5761 §4: second
        /// byte 192…223) is recognized and handled as RTCP.
        case rtp([UInt8])
        /// A datagram from the RTCP port.
        case rtcp([UInt8])
        /// Time passed.
        case timer
    }

    /// What the receiver asks the driver to do.
    public enum Output: Equatable, Sendable {
        /// Send this RTCP packet to the sender.
        case rtcp([UInt8])
        /// The next frame, in order, with its original pts.
        case frame(VideoFrame)
        case event(Event)
    }

    public enum Event: Equatable, Sendable {
        /// The sender said BYE and nothing more can arrive: the last output.
        case finished
    }

    /// Timing of the last frame out, for latency measurements.
    public struct FrameTiming: Equatable, Sendable {
        public var pts: Int64
        public var rtpTimestamp: UInt32
        /// When the frame came out of the jitter buffer.
        public var completed: Instant
        /// When the sender's media clock read this frame's timestamp, by the latest sender
        /// report's NTP/RTP pair (RFC 3550 §6.4.1); nil before a sender report. Under real-time
        /// pacing that is when the frame left; `completed − senderTime` is its latency when
        /// both ends share a clock.
        public var senderTime: Instant?

        /// `completed − senderTime`, when known.
        public var latency: Duration? { senderTime.map { completed - $0 } }
    }

    /// Counters.
    public struct Stats: Equatable, Sendable {
        public var framesReceived = 0
        /// Complete frames dropped because no keyframe had come yet (a receiver that joined
        /// midway): they cannot be decoded.
        public var framesBeforeKeyframe = 0
        /// Frame bytes delivered.
        public var frameBytes = 0
        /// Distinct RTP packets accepted.
        public var packetsReceived = 0
        /// RTP bytes (headers included) of every valid packet, duplicates too.
        public var bytesReceived = 0
        /// Packets given up on (never arrived, or part of a frame that never completed).
        public var lost = 0
        /// Gaps the jitter buffer skipped.
        public var gaps = 0
        /// Packets that arrived after being NACKed (repaired).
        public var recovered = 0
        public var duplicates = 0
        /// Packets that arrived after their place was emitted or skipped.
        public var late = 0
        /// Packets refused because the jitter buffer was full.
        public var overflow = 0
        /// Frames whose packets were all there but did not depacketize.
        public var corruptFrames = 0
        /// NACK packets sent, and the sequence numbers they asked for.
        public var nacksSent = 0
        public var nackedPackets = 0
        public var plisSent = 0
        public var receiverReportsSent = 0
        public var senderReportsReceived = 0
        /// Datagrams that were neither valid RTP nor valid RTCP.
        public var malformed = 0
        public var wrongPayloadType = 0
        public var wrongSSRC = 0
        /// RTX packets turned back into original packets.
        public var retransmissionsReceived = 0
        /// RTX packets with no payload (padding probes).
        public var retransmissionPadding = 0
        /// RTX packets that came before the original stream was known, or were too short.
        public var retransmissionsDropped = 0
        public var byeReceived = false

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var stats = Stats()
    /// The sender's SSRC, once known.
    public private(set) var remoteSSRC: UInt32?
    /// The payload type accepted, once known.
    public private(set) var payloadType: UInt8?
    /// Timing of the last frame output.
    public private(set) var lastFrameTiming: FrameTiming?

    private var jitter: JitterBuffer<CodecDepacketizer>
    private var nacks: NackGenerator
    private var unwrapper = SequenceUnwrapper()
    private var lowestSequence: UInt64?
    /// A packet from a source not yet taken on (see `probe`).
    private var probation: (packet: RTPPacket, size: Int, arrival: Instant)?
    private var packetsSinceReport = 0
    private var outputs = OutputQueue<Output>()
    private var lastNow: Instant
    private var nextReceiverReport: Instant?
    private var lastPictureLoss: Instant?
    private var lastArrival: Instant?
    /// The extended sequence number of the stream's last packet, when the sender's final report
    /// said it is beyond the highest seen.
    private var expectedLast: UInt64?
    /// Where the stream is in its life.
    private var phase = Phase.streaming
    /// Whether frames wait for a keyframe.
    private var keyframeWait: KeyframeWait

    /// Where the stream is in its life.
    private enum Phase: Equatable {
        /// Packets are taken.
        case streaming
        /// The sender said BYE at `since`: the stream ends once nothing is buffered or missing and
        /// no packet arrived for `finishGrace`.
        case ending(since: Instant)
        /// `.finished` was queued: nothing more is taken.
        case finished
    }

    /// Whether frames wait for a keyframe: from the start when the stream's first sequence number
    /// is unknown (the receiver may have joined midway), until the first keyframe.
    private enum KeyframeWait: Equatable {
        /// Every frame is delivered.
        case none
        /// Frames are dropped until a keyframe; the sender's SSRC is unknown, so no PLI can name it.
        case awaitingSource
        /// Frames are dropped until a keyframe, asked for by PLIs, on a timer from `since`.
        case requesting(since: Instant)
    }
    // Interarrival jitter (RFC 3550 §A.8), in RTP clock units ×16.
    private var lastTransit: Int64?
    private var jitterQ4: Int64 = 0
    // For the fraction lost of each report (RFC 3550 §A.3).
    private var expectedPrior: Int64 = 0
    private var receivedPrior: Int64 = 0
    // The latest sender report: its compact NTP time, when it came, and its NTP/RTP pair.
    private var lastSenderReport: (compact: UInt32, arrival: Instant, ntp: UInt64, rtp: UInt32)?
    // Output pts: the timestamp all others are measured from, and the last one, unwrapped.
    private var timestampReference: UInt32?
    private var lastTimestamp: (rtp: UInt32, offset: Int64)?

    public init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        remoteSSRC = configuration.remoteSSRC
        payloadType = configuration.payloadType
        jitter = JitterBuffer(depacketizer: configuration.codec.depacketizer(),
                              configuration: JitterBufferConfiguration(latency: configuration.jitterBufferLatency,
                                                                       maxPackets: configuration.maxBufferedPackets,
                                                                       startupDelay: configuration.startupDelay))
        nacks = NackGenerator(configuration: configuration.nack, initialRoundTripTime: configuration.roundTripTime)
        timestampReference = configuration.timestampOrigin
        lastNow = now
        if configuration.firstSequenceNumber != nil {
            keyframeWait = .none
        } else {
            keyframeWait = configuration.remoteSSRC == nil ? .awaitingSource : .requesting(since: now)
        }
        if let first = configuration.firstSequenceNumber {
            jitter.expectFirst(sequenceNumber: first)
            nacks.expectFirst(sequenceNumber: first)
            lowestSequence = unwrapper.unwrap(first)
        }
    }

    /// Whether the receiver has finished and its last output was taken.
    public var isFinished: Bool { phase == .finished && outputs.isEmpty }

    // MARK: Input

    public mutating func handle(_ input: Input, now: Instant) {
        lastNow = max(lastNow, now)
        guard phase != .finished else { return }
        switch input {
        case .timer:
            break
        case .rtp(let bytes):
            if bytes.count >= 2, (192...223).contains(bytes[1]) {
                receiveRTCP(bytes, now: now)
            } else {
                receiveRTP(bytes, now: now)
            }
        case .rtcp(let bytes):
            receiveRTCP(bytes, now: now)
        }
        advance(now: now)
    }

    private mutating func receiveRTP(_ bytes: [UInt8], now: Instant) {
        guard let packet = try? RTPPacket(parsing: bytes) else {
            stats.malformed += 1
            return
        }
        if let rtx = configuration.retransmission, packet.payloadType == rtx.payloadType {
            receiveRetransmission(packet, on: rtx, size: bytes.count, now: now)
            return
        }
        if let payloadType, packet.payloadType != payloadType {
            stats.wrongPayloadType += 1
            return
        }
        guard let remoteSSRC else {
            probe(packet, size: bytes.count, now: now)
            return
        }
        guard packet.ssrc == remoteSSRC else {
            stats.wrongSSRC += 1
            return
        }
        accept(packet, size: bytes.count, now: now)
    }

    /// An RTX packet (RFC 4588 §4): from the RTX SSRC (or, when none was announced, any source
    /// but the stream's own), unwrapped into the original packet of the stream.
    private mutating func receiveRetransmission(_ packet: RTPPacket, on rtx: RetransmissionStream, size: Int,
                                                now: Instant) {
        guard rtx.ssrc.map({ $0 == packet.ssrc }) ?? (packet.ssrc != remoteSSRC) else {
            stats.wrongSSRC += 1
            return
        }
        if packet.isRetransmissionPadding {
            stats.retransmissionPadding += 1
            return
        }
        guard let remoteSSRC, let payloadType,
              let original = try? packet.originalFromRetransmission(ssrc: remoteSSRC, payloadType: payloadType)
        else {
            stats.retransmissionsDropped += 1
            return
        }
        stats.retransmissionsReceived += 1
        accept(original, size: size, now: now)
    }

    /// An unknown source is taken on after two packets in sequence (RFC 3550 §A.1 "probation"),
    /// or one packet and a sender report from it, so a stray datagram that happens to look like
    /// RTP cannot capture the receiver.
    private mutating func probe(_ packet: RTPPacket, size: Int, now: Instant) {
        if let candidate = probation, candidate.packet.ssrc == packet.ssrc,
           candidate.packet.payloadType == packet.payloadType,
           packet.sequenceNumber == candidate.packet.sequenceNumber &+ 1 {
            lock(on: packet.ssrc, payloadType: packet.payloadType, now: now)
            accept(packet, size: size, now: now)
            return
        }
        if probation != nil { stats.wrongSSRC += 1 }  // the candidate it replaces was no stream
        probation = (packet, size, now)
    }

    /// Takes `ssrc` as the stream, with the packet on probation if it is from it.
    private mutating func lock(on ssrc: UInt32, payloadType: UInt8?, now: Instant) {
        remoteSSRC = ssrc
        if keyframeWait != .none { keyframeWait = .requesting(since: now) }
        if let payloadType { self.payloadType = payloadType }
        if let candidate = probation, candidate.packet.ssrc == ssrc {
            self.payloadType = candidate.packet.payloadType
            accept(candidate.packet, size: candidate.size, now: candidate.arrival)
        }
        probation = nil
    }

    private mutating func accept(_ packet: RTPPacket, size: Int, now: Instant) {
        stats.bytesReceived += size
        lastArrival = max(lastArrival ?? now, now)
        if nextReceiverReport == nil { nextReceiverReport = now + configuration.receiverReportInterval }
        let repaired = nacks.received(sequenceNumber: packet.sequenceNumber, now: now)
        switch jitter.insert(packet, now: now) {
        case .accepted:
            stats.packetsReceived += 1
            packetsSinceReport += 1
            if repaired { stats.recovered += 1 }
            let sequence = unwrapper.unwrap(packet.sequenceNumber)
            lowestSequence = min(lowestSequence ?? sequence, sequence)
            if !repaired { updateJitter(packet.timestamp, now: now) }
        case .duplicate:
            stats.duplicates += 1
        case .late:
            stats.late += 1
        case .overflow:
            stats.overflow += 1
        }
    }

    /// RFC 3550 §A.8: J += (|D| − J) / 16, D the change in transit time, in RTP clock units.
    private mutating func updateJitter(_ timestamp: UInt32, now: Instant) {
        // Microseconds × 9 / 100 = 90 kHz ticks, without overflowing for today's instants.
        let arrival = now.nanosecondsSinceEpoch / 1000 * (VideoCodec.clockRate / 10_000) / 100
        let transit = arrival &- Int64(timestamp)
        if let lastTransit {
            let d = (transit &- lastTransit).magnitude
            if d < UInt64(UInt32.max) { jitterQ4 += Int64(d) - (jitterQ4 + 8) / 16 }
        }
        lastTransit = transit
    }

    private mutating func receiveRTCP(_ bytes: [UInt8], now: Instant) {
        guard let packets = try? RTCPPacket.parseCompound(bytes) else {
            stats.malformed += 1
            return
        }
        for packet in packets {
            switch packet {
            case .senderReport(let sr) where sr.ssrc == remoteSSRC && packets.contains(where: isGoodbye):
                // The sender's last report: its packet count gives the stream's last sequence
                // number, so a lost tail is NACKed instead of silently missing.
                stats.senderReportsReceived += 1
                lastSenderReport = (sr.compactNTP, now, sr.ntpTimestamp, sr.rtpTimestamp)
                expectLast(packetCount: sr.packetCount, now: now)
            case .senderReport(let sr) where remoteSSRC == nil || sr.ssrc == remoteSSRC:
                if remoteSSRC == nil, probation?.packet.ssrc == sr.ssrc {
                    lock(on: sr.ssrc, payloadType: nil, now: now)
                }
                stats.senderReportsReceived += 1
                lastSenderReport = (sr.compactNTP, now, sr.ntpTimestamp, sr.rtpTimestamp)
            case .goodbye(let bye) where remoteSSRC.map(bye.sources.contains) ?? true:
                if phase == .streaming {
                    stats.byeReceived = true
                    phase = .ending(since: now)
                }
                // Answer every BYE with a report, so the sender learns what is still missing.
                queueReport(now: now, extra: [])
            default:
                break
            }
        }
    }

    private func isGoodbye(_ packet: RTCPPacket) -> Bool {
        if case .goodbye(let bye) = packet, let remoteSSRC { return bye.sources.contains(remoteSSRC) }
        return false
    }

    /// The stream ends `packetCount` packets after its first: the signaled first sequence number
    /// (`init` makes it the lowest), else the lowest seen — if the very first packets were lost
    /// unseen, the end is overestimated by as many, and NACKing numbers never sent then costs a
    /// retry budget and counts them lost, which they were. A count from outside is bounded: at
    /// most the NACK generator's limit beyond the highest seen is ever asked for.
    private mutating func expectLast(packetCount: UInt32, now: Instant) {
        guard packetCount > 0, let lowest = lowestSequence, let highest = unwrapper.highest else { return }
        let (last, overflow) = lowest.addingReportingOverflow(UInt64(packetCount) - 1)
        guard !overflow, last > highest, last - highest <= UInt64(max(0, configuration.nack.maxMissing)) else {
            return
        }
        expectedLast = last
        nacks.expectLast(sequenceNumber: UInt16(truncatingIfNeeded: last), now: now)
    }

    // MARK: Output

    /// The next frame, RTCP packet or event, or nil until `nextDeadline` or the next input. Frames
    /// are handed out, never written: the driver records them (`VideoFileSink`).
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// When the receiver next has something to do if nothing arrives.
    public var nextDeadline: Instant? {
        if !outputs.isEmpty { return lastNow }
        guard phase != .finished else { return nil }
        var deadline = nextReceiverReport
        func consider(_ instant: Instant?) {
            if let instant { deadline = deadline.map { min($0, instant) } ?? instant }
        }
        consider(jitter.nextDeadline)
        consider(nacks.nextDeadline)
        consider(keyframeRequestDue)
        // The end waits for what is buffered or missing (their own deadlines drive until then):
        // a past finish instant offered meanwhile would have the driver spin.
        if case .ending(let byeAt) = phase, jitter.count == 0, nacks.missingCount == 0 {
            consider(max(byeAt, lastArrival ?? byeAt) + configuration.finishGrace)
        }
        return deadline
    }

    private mutating func advance(now: Instant) {
        guard phase != .finished else { return }
        for event in jitter.poll(now: now) {
            switch event {
            case .frame(let frame):
                if keyframeWait != .none {
                    guard jitter.depacketizer.isKeyframe(frame.bytes) else {
                        stats.framesBeforeKeyframe += 1
                        requestKeyframe(now: now)
                        continue
                    }
                    keyframeWait = .none
                }
                deliver(frame, now: now)
                if let limit = configuration.frameLimit, stats.framesReceived >= limit {
                    finish(now: now)
                    return
                }
            case .gap(let range):
                stats.gaps += 1
                stats.lost += range.count
                nacks.forget(before: UInt16(truncatingIfNeeded: range.upperBound))
                requestKeyframe(now: now)
            case .corruptFrame:
                stats.corruptFrames += 1
                requestKeyframe(now: now)
            }
        }
        let request = nacks.poll(now: now)
        if !request.sequenceNumbers.isEmpty, let remoteSSRC {
            stats.nacksSent += 1
            stats.nackedPackets += request.sequenceNumbers.count
            let nack = RTCPGenericNack(senderSSRC: configuration.ssrc, mediaSSRC: remoteSSRC,
                                       lost: request.sequenceNumbers)
            queueReport(now: now, extra: [.nack(nack)])
        }
        if request.requestKeyframe { requestKeyframe(now: now) }
        if let due = keyframeRequestDue, now >= due { requestKeyframe(now: now) }
        if let due = nextReceiverReport, now >= due { queueReport(now: now, extra: []) }
        if let every = configuration.receiverReportPackets, packetsSinceReport >= every {
            queueReport(now: now, extra: [])
        }
        if case .ending(let byeAt) = phase, jitter.count == 0, nacks.missingCount == 0,
           now >= max(byeAt, lastArrival ?? byeAt) + configuration.finishGrace {
            finish(now: now)
        }
    }

    private mutating func deliver(_ frame: ReceivedFrame, now: Instant) {
        let pts = outputPTS(frame.rtpTimestamp)
        stats.framesReceived += 1
        stats.frameBytes += frame.bytes.count
        var senderTime: Instant?
        if let sr = lastSenderReport {
            let ticks = Int64(Int32(bitPattern: frame.rtpTimestamp &- sr.rtp))
            senderTime = NTPTimestamp.instant(sr.ntp) + .nanoseconds(ticks * 1_000_000_000 / VideoCodec.clockRate)
        }
        lastFrameTiming = FrameTiming(pts: pts, rtpTimestamp: frame.rtpTimestamp, completed: now,
                                      senderTime: senderTime)
        outputs.append(.frame(VideoFrame(bytes: frame.bytes, pts: pts)))
    }

    /// The pts of a frame with RTP timestamp `rtp`: its unwrapped distance from the reference
    /// timestamp, in the output time base (rounded to the nearest tick).
    private mutating func outputPTS(_ rtp: UInt32) -> Int64 {
        let reference = timestampReference ?? rtp
        timestampReference = reference
        let offset: Int64
        if let last = lastTimestamp {
            offset = last.offset + Int64(Int32(bitPattern: rtp &- last.rtp))
        } else {
            offset = Int64(Int32(bitPattern: rtp &- reference))
        }
        lastTimestamp = (rtp, offset)
        let base = configuration.firstPTS
        let tb = configuration.timebase
        let scale = Int64(tb.numerator) * VideoCodec.clockRate
        guard scale > 0 else { return base }
        let (product, overflow) = offset.multipliedReportingOverflow(by: Int64(tb.denominator))
        guard !overflow else { return base }
        let rounded = product >= 0 ? (product + scale / 2) / scale : (product - scale / 2) / scale
        return base &+ rounded
    }

    /// When the next PLI asking for the first keyframe is due, if nothing asks sooner.
    private var keyframeRequestDue: Instant? {
        guard case .requesting(let since) = keyframeWait, configuration.pictureLossInterval > .zero else { return nil }
        return max(since, lastPictureLoss ?? since) + configuration.pictureLossInterval
    }

    private mutating func requestKeyframe(now: Instant) {
        guard let remoteSSRC else { return }
        if let last = lastPictureLoss, now - last < configuration.pictureLossInterval { return }
        lastPictureLoss = now
        stats.plisSent += 1
        let pli = RTCPPictureLossIndication(senderSSRC: configuration.ssrc, mediaSSRC: remoteSSRC)
        queueReport(now: now, extra: [.pictureLossIndication(pli)])
    }

    private mutating func finish(now: Instant) {
        if let expectedLast, let highest = unwrapper.highest, expectedLast > highest {
            // The tail never came, even NACKed: lost for good, and said so.
            stats.lost += Int(expectedLast - highest)
        }
        queueReport(now: now, extra: [.goodbye(RTCPGoodbye(sources: [configuration.ssrc]))])
        phase = .finished
        outputs.append(.event(.finished))
    }

    /// RR + SDES + `extra`: the receiver's RTCP compound packet (RFC 3550 §6.1).
    private mutating func queueReport(now: Instant, extra: [RTCPPacket]) {
        var blocks: [RTCPReportBlock] = []
        if let remoteSSRC, let highest = unwrapper.highest, let lowest = lowestSequence {
            let expected = Int64(highest - lowest + 1)
            let received = Int64(stats.packetsReceived)
            let expectedInterval = expected - expectedPrior
            let receivedInterval = received - receivedPrior
            expectedPrior = expected
            receivedPrior = received
            let lostInterval = expectedInterval - receivedInterval
            let fraction = expectedInterval <= 0 || lostInterval <= 0 ? 0 : (lostInterval << 8) / expectedInterval
            var lsr: UInt32 = 0, dlsr: UInt32 = 0
            if let sr = lastSenderReport {
                lsr = sr.compact
                dlsr = NTPTimestamp.compactUnits(now - sr.arrival)
            }
            blocks.append(RTCPReportBlock(
                ssrc: remoteSSRC, fractionLost: UInt8(clamping: fraction),
                cumulativeLost: Int32(clamping: max(-(1 << 23), min((1 << 23) - 1, expected - received))),
                extendedHighestSequence: UInt32(truncatingIfNeeded: highest &- (1 << 16)),
                jitter: UInt32(clamping: jitterQ4 / 16), lastSenderReport: lsr, delaySinceLastSenderReport: dlsr))
        }
        let ssrc = configuration.ssrc
        let compound: [RTCPPacket] = [
            .receiverReport(RTCPReceiverReport(ssrc: ssrc, reports: blocks)),
            .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: configuration.cname)),
        ] + extra
        stats.receiverReportsSent += 1
        packetsSinceReport = 0
        outputs.append(.rtcp(RTCPPacket.serializeCompound(compound)))
        nextReceiverReport = now + configuration.receiverReportInterval
    }
}
