// A MediaSender and a MediaReceiver wired together on the tests' one in-memory network
// (TestNetwork) on a manual clock: the same machines the CLI and the peer drive over UDP, with
// time jumping from one deadline to the next so a two-second stream runs in milliseconds. Each
// direction leaves from a host of its own whose link carries that direction's impairment, so the
// forward and backward paths are impaired independently, each crossing one impaired link once.

import TestNetwork
import Testing
import ZoneCore
@testable import Media

struct MediaSessionHarness {
    /// The sender's RTP and RTCP leave from here (the forward path's impaired link).
    static let senderOut = Endpoint(address: .v4(0x0A00_0001), port: 5000)
    /// The receiver's RTP port; its RTCP port is the next (RFC 3550 §11).
    static let receiverRTP = Endpoint(address: .v4(0x0A00_0002), port: 6000)
    static let receiverRTCP = Endpoint(address: .v4(0x0A00_0002), port: 6001)
    /// The receiver's RTCP leaves from here (the backward path's impaired link).
    static let receiverOut = Endpoint(address: .v4(0x0A00_0003), port: 6001)
    static let senderRTCP = Endpoint(address: .v4(0x0A00_0004), port: 5001)

    let clock = ManualClock()
    let start: Instant
    var sender: MediaSender
    var receiver: MediaReceiver
    /// Carries both directions; its counters say what the links lost, reordered and duplicated.
    let network: TestNetwork
    /// Drops chosen RTP packets on the forward path: called with each packet's sequence number
    /// and how many times that number was sent before; true drops it.
    var dropRTP: (UInt16, Int) -> Bool = { _, _ in false }
    private var sentCount: [UInt16: Int] = [:]
    /// Datagrams the forward path's link lost (the network's counters add the backward's).
    var forwardLost = 0

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
        // The network draws from one generator: the forward spec's seed, mixed with the
        // backward's so either changes the draws.
        network = TestNetwork(start: start, seed: forward.seed &* 0x9E37_79B9_7F4A_7C15 ^ backward.seed)
        network.setLink(TestNetwork.link(forward), for: Self.senderOut.address)
        network.setLink(TestNetwork.link(backward), for: Self.receiverOut.address)
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
            guard advance() else { break }
        }
        return clock.now() - start
    }

    /// Moves the clock to the next deadline or arrival and feeds both machines' timers; false
    /// when nothing is left to wait for.
    mutating func advance() -> Bool {
        let deadlines = [sender.nextDeadline, receiver.nextDeadline, network.nextArrival].compactMap { $0 }
        guard let next = deadlines.min() else { return false }
        if next > clock.now() {
            clock.set(to: next)
            sender.handle(.timer, now: next)
            receiver.handle(.timer, now: next)
        }
        return true
    }

    /// Moves everything that is due now.
    mutating func step() {
        let now = clock.now()
        network.advance(to: now)
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
                    if !dropRTP(packet.sequenceNumber, count) { sendForward(bytes, to: Self.receiverRTP) }
                case .rtcp(let bytes):
                    if (try? RTCPPacket.parseCompound(bytes)) == nil { allRTCPParsed = false }
                    sendForward(bytes, to: Self.receiverRTCP)
                case .event(let event):
                    senderEvents.append(event)
                }
            }
            while let arrival = network.arrival(notAfter: now) {
                moved = true
                switch arrival.to {
                case Self.receiverRTP: receiver.handle(.rtp(arrival.payload), now: now)
                case Self.receiverRTCP: receiver.handle(.rtcp(arrival.payload), now: now)
                default: sender.handle(.rtcp(arrival.payload), now: now)
                }
            }
            while let output = receiver.pollOutput() {
                moved = true
                switch output {
                case .frame(let frame):
                    received.append(frame)
                    if let timing = receiver.lastFrameTiming { timings.append(timing) }
                case .rtcp(let bytes):
                    if (try? RTCPPacket.parseCompound(bytes)) == nil { allRTCPParsed = false }
                    network.send(bytes, from: Self.receiverOut, to: Self.senderRTCP)
                case .event(let event):
                    receiverEvents.append(event)
                }
            }
        }
    }

    /// Sends on the forward path; only the sender's link is impaired, so a loss is counted here.
    private mutating func sendForward(_ bytes: [UInt8], to destination: Endpoint) {
        if !network.send(bytes, from: Self.senderOut, to: destination) { forwardLost += 1 }
    }
}
