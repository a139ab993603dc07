// The real driver of a MediaReceiver: the RTP socket (and the RTCP socket, port + 1) on an
// event loop and the wall clock. Datagrams go into the receiver, frames go to the caller, and
// the receiver's RTCP goes back to where the sender's RTCP came from (or, before any, to the
// source of its RTP: a sender that reads RTCP on its RTP socket, as ours does, gets it there).
// An idle timeout ends a stream that went silent without a BYE.

import Media
import Net
import ZoneCore

/// Runs a `MediaReceiver` on UDP sockets until the stream ends.
public final class MediaReceiverRunner: @unchecked Sendable {
    public struct Options: Sendable {
        /// No datagram for this long ends the run (before the first one too).
        public var idleTimeout: Duration
        /// Where to send RTCP; nil learns it from the sender's datagrams.
        public var feedbackDestination: Endpoint?

        public init(idleTimeout: Duration = .seconds(10), feedbackDestination: Endpoint? = nil) {
            self.idleTimeout = idleTimeout
            self.feedbackDestination = feedbackDestination
        }
    }

    /// Why the run ended.
    public enum Ending: String, Sendable {
        /// The sender said BYE and everything that could arrive did.
        case bye
        /// The caller had enough frames.
        case frameLimit = "frames"
        /// Nothing arrived for the idle timeout.
        case idle
        /// `stop()` was called.
        case stopped
    }

    public struct Result: Sendable {
        public var stats: MediaReceiver.Stats
        public var ending: Ending
        public var started: Instant
        public var firstArrival: Instant?
        public var lastFrame: Instant?
        public var ended: Instant
        /// The sender's RTP source address, once seen.
        public var source: Endpoint?
    }

    public let loop: EventLoop
    public let rtpSocket: UDPSocket
    public let rtcpSocket: UDPSocket?
    public let options: Options
    // Loop-confined state.
    private var receiver: MediaReceiver
    private var rtpSource: Endpoint?
    private var rtcpSource: Endpoint?
    private var timer: EventLoop.Timer?
    private var timerDue: Instant?
    private var started: Instant?
    private var firstArrival: Instant?
    private var lastArrival: Instant?
    private var lastFrame: Instant?
    private var finished = false
    private var onFrame: ((VideoFrame, MediaReceiver.FrameTiming?) -> Bool)?
    private var onFinish: ((Result) -> Void)?

    public init(receiver: MediaReceiver, rtpSocket: UDPSocket, rtcpSocket: UDPSocket?, loop: EventLoop,
                options: Options = Options()) {
        self.receiver = receiver
        self.rtpSocket = rtpSocket
        self.rtcpSocket = rtcpSocket
        self.loop = loop
        self.options = options
    }

    /// Starts receiving (from any thread). `onFrame` gets each frame in order and returns false
    /// to end the run; `onFinish` runs once at the end. Both run on the loop's thread.
    public func start(onFrame: @escaping @Sendable (VideoFrame, MediaReceiver.FrameTiming?) -> Bool,
                      onFinish: @escaping @Sendable (Result) -> Void) {
        loop.execute { [self] in
            self.onFrame = onFrame
            self.onFinish = onFinish
            started = loop.clock.now()
            do {
                try loop.register(rtpSocket.fd, interest: .readable) { [weak self] _ in self?.pump() }
                if let rtcpSocket {
                    try loop.register(rtcpSocket.fd, interest: .readable) { [weak self] _ in self?.pump() }
                }
            } catch {
                complete(.stopped)
                return
            }
            pump()
        }
    }

    /// Ends the run early (from any thread).
    public func stop() {
        loop.execute { [self] in complete(.stopped) }
    }

    // MARK: The loop

    private func pump() {
        guard !finished else { return }
        let now = loop.clock.now()
        var arrived = false
        // RTP first: a BYE waiting beside the last packets is then read after them, and the
        // report answering it counts them.
        rtpSocket.receiveAll { bytes, from in
            arrived = true
            rtpSource = from
            receiver.handle(.rtp(Array(bytes)), now: now)
        }
        rtcpSocket?.receiveAll { bytes, from in
            arrived = true
            rtcpSource = from
            receiver.handle(.rtcp(Array(bytes)), now: now)
        }
        if arrived {
            lastArrival = now
            if firstArrival == nil { firstArrival = now }
        }
        receiver.handle(.timer, now: now)
        var feedback: [(payload: [UInt8], to: Endpoint)] = []
        while let output = receiver.pollOutput() {
            switch output {
            case .frame(let frame):
                lastFrame = now
                if onFrame?(frame, receiver.lastFrameTiming) == false {
                    send(feedback)
                    complete(.frameLimit)
                    return
                }
            case .rtcp(let bytes):
                if let to = options.feedbackDestination ?? rtcpSource ?? rtpSource { feedback.append((bytes, to)) }
            case .event(.finished):
                send(feedback)
                complete(.bye)
                return
            }
        }
        send(feedback)
        let idleEnd = (lastArrival ?? started ?? now) + options.idleTimeout
        if now >= idleEnd {
            complete(.idle)
            return
        }
        let next = [receiver.nextDeadline, idleEnd].compactMap { $0 }.min()!
        guard next != timerDue else { return }
        if let timer { loop.cancel(timer) }
        timerDue = max(next, now)
        timer = loop.schedule(at: max(next, now)) { [weak self] in
            self?.timerDue = nil
            self?.pump()
        }
    }

    private func send(_ datagrams: [(payload: [UInt8], to: Endpoint)]) {
        guard !datagrams.isEmpty else { return }
        // RTCP leaves from the RTCP socket when there is one (RFC 3550 §11), else the RTP one.
        (rtcpSocket ?? rtpSocket).send(datagrams)
    }

    private func complete(_ ending: Ending) {
        guard !finished else { return }
        finished = true
        if let timer { loop.cancel(timer) }
        loop.deregister(rtpSocket.fd)
        if let rtcpSocket { loop.deregister(rtcpSocket.fd) }
        let result = Result(stats: receiver.stats, ending: ending, started: started ?? loop.clock.now(),
                            firstArrival: firstArrival, lastFrame: lastFrame, ended: loop.clock.now(),
                            source: rtpSource)
        onFinish?(result)
        onFinish = nil
        onFrame = nil
    }
}
