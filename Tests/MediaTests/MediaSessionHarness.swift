// A MediaSender and a MediaReceiver wired together in memory on a manual clock, through a
// seeded impairment each way: the same machines the CLI and the peer drive over UDP, with time
// jumping from one deadline to the next so a two-second stream runs in milliseconds.

import Testing
import ZoneCore
@testable import Media

struct MediaSessionHarness {
    /// A datagram on the sender→receiver path, on the RTP or the RTCP port.
    enum Forward: Sendable {
        case rtp([UInt8])
        case rtcp([UInt8])
    }

    let clock = ManualClock()
    let start: Instant
    var sender: MediaSender
    var receiver: MediaReceiver
    var forward: Impairment<Forward>
    var backward: Impairment<[UInt8]>
    /// Drops chosen RTP packets on the forward path: called with each packet's sequence number
    /// and how many times that number was sent before; true drops it.
    var dropRTP: (UInt16, Int) -> Bool = { _, _ in false }
    private var sentCount: [UInt16: Int] = [:]

    var received: [VideoFrame] = []
    var timings: [MediaReceiver.FrameTiming] = []
    var senderEvents: [MediaSender.Event] = []
    var receiverEvents: [MediaReceiver.Event] = []
    /// When each original RTP packet first left the sender, by sequence number.
    var firstSent: [UInt16: Instant] = [:]
    /// Whether every RTCP datagram either side sent parsed as a compound packet.
    var allRTCPParsed = true

    init(sender: (Instant) -> MediaSender, receiver: (Instant) -> MediaReceiver,
         forward: ImpairmentSpec = ImpairmentSpec(), backward: ImpairmentSpec = ImpairmentSpec()) {
        start = clock.now()
        self.sender = sender(start)
        self.receiver = receiver(start)
        self.forward = Impairment(spec: forward)
        self.backward = Impairment(spec: backward)
    }

    /// A sender and receiver of `frames` with matching configurations.
    init(frames: [VideoFrame], codec: VideoCodec, timebase: Timebase, pace: MediaSender.Pace = .realtime,
         seed: UInt64 = 1, forward: ImpairmentSpec = ImpairmentSpec(), backward: ImpairmentSpec = ImpairmentSpec(),
         maxPayloadSize: Int = 1200, tune: (inout MediaReceiver.Configuration) -> Void = { _ in }) {
        var random = SeededRandom(seed: seed)
        var senderConfiguration = MediaSender.Configuration.random(codec: codec, using: &random)
        senderConfiguration.pace = pace
        senderConfiguration.maxPayloadSize = maxPayloadSize
        var receiverConfiguration = MediaReceiver.Configuration(codec: codec, ssrc: 0xABCD)
        receiverConfiguration.payloadType = senderConfiguration.payloadType
        receiverConfiguration.timebase = timebase
        receiverConfiguration.timestampOrigin = senderConfiguration.timestampOrigin
        receiverConfiguration.firstSequenceNumber = senderConfiguration.initialSequenceNumber
        tune(&receiverConfiguration)
        let s = senderConfiguration, r = receiverConfiguration
        self.init(sender: { MediaSender(configuration: s, frames: frames, timebase: timebase, now: $0) },
                  receiver: { MediaReceiver(configuration: r, now: $0) },
                  forward: forward, backward: backward)
    }

    var finished: Bool { sender.isFinished && receiver.isFinished }

    /// Whether the frames received are `frames` (compared without printing megabytes on failure).
    func receivedEqual(_ frames: [VideoFrame]) -> Bool { received == frames }

    /// A line to print when they differ.
    func difference(from frames: [VideoFrame]) -> String {
        let firstDifferent = zip(received, frames).enumerated().first { $1.0 != $1.1 }?.offset
        return "received \(received.count) of \(frames.count) frames; pts \(received.map(\.pts).prefix(80)); "
            + "first different at \(firstDifferent.map(String.init) ?? "none")"
    }

    /// Runs until both ends finish or `limit` of virtual time passes; returns the time taken.
    @discardableResult
    mutating func run(limit: Duration = .seconds(60)) -> Duration {
        var iterations = 0
        while !finished && clock.now() - start < limit {
            iterations += 1
            precondition(iterations < 5_000_000, "the session does not make progress")
            step()
            let now = clock.now()
            let deadlines = [sender.nextDeadline, receiver.nextDeadline, forward.nextDeadline,
                             backward.nextDeadline].compactMap { $0 }
            guard let next = deadlines.min() else { break }
            if next > now {
                clock.set(to: next)
                sender.handle(.timer, now: next)
                receiver.handle(.timer, now: next)
            }
        }
        return clock.now() - start
    }

    /// Moves everything that is due now.
    mutating func step() {
        let now = clock.now()
        var moved = true
        while moved {
            moved = false
            while let output = sender.pollOutput() {
                moved = true
                switch output {
                case .rtp(let bytes):
                    let packet = try! RTPPacket(parsing: bytes)
                    let count = sentCount[packet.sequenceNumber, default: 0]
                    sentCount[packet.sequenceNumber] = count + 1
                    if count == 0 { firstSent[packet.sequenceNumber] = now }
                    if !dropRTP(packet.sequenceNumber, count) { forward.submit(.rtp(bytes), now: now) }
                case .rtcp(let bytes):
                    if (try? RTCPPacket.parseCompound(bytes)) == nil { allRTCPParsed = false }
                    forward.submit(.rtcp(bytes), now: now)
                case .event(let event):
                    senderEvents.append(event)
                }
            }
            while let datagram = forward.poll(now: now) {
                moved = true
                switch datagram {
                case .rtp(let bytes): receiver.handle(.rtp(bytes), now: now)
                case .rtcp(let bytes): receiver.handle(.rtcp(bytes), now: now)
                }
            }
            while let bytes = backward.poll(now: now) {
                moved = true
                sender.handle(.rtcp(bytes), now: now)
            }
            while let output = receiver.pollOutput() {
                moved = true
                switch output {
                case .frame(let frame):
                    received.append(frame)
                    if let timing = receiver.lastFrameTiming { timings.append(timing) }
                case .rtcp(let bytes):
                    if (try? RTCPPacket.parseCompound(bytes)) == nil { allRTCPParsed = false }
                    backward.submit(bytes, now: now)
                case .event(let event):
                    receiverEvents.append(event)
                }
            }
        }
    }
}
