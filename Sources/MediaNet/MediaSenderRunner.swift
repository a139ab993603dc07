// The real driver of a MediaSender: a UDP socket on an event loop, the wall clock and the frame
// source (a file). It moves bytes, frames and time only: frames read from the source go into the
// sender as far ahead as it asks (`framesWanted`), RTCP read from the socket goes into the sender,
// the sender's RTP and RTCP go out (through an optional seeded impairment), and the loop wakes at
// the sender's next deadline. Unpaced output is sent in sendmmsg batches while the socket is writable; when the
// kernel takes no more, the unsent datagrams wait (one batch at most) for the socket to drain,
// so a fast sender never piles packets up in memory.

import Media
import Net
import ZoneCore

/// Runs a `MediaSender` on a `UDPSocket` until it finishes.
public final class MediaSenderRunner: @unchecked Sendable {
    /// Where the datagrams go, and what happens to them on the way.
    public struct Options: Sendable {
        public var rtpDestination: Endpoint
        /// Where RTCP goes: the RTP port + 1 (RFC 3550 §11), or the RTP port itself (rtcp-mux).
        public var rtcpDestination: Endpoint
        /// A seeded user-space impairment of everything sent (this kernel has no netem).
        public var impairment: ImpairmentSpec?
        /// Datagrams per sendmmsg call.
        public var batch: Int

        public init(rtpDestination: Endpoint, rtcpDestination: Endpoint, impairment: ImpairmentSpec? = nil,
                    batch: Int = 64) {
            self.rtpDestination = rtpDestination
            self.rtcpDestination = rtcpDestination
            self.impairment = impairment
            self.batch = max(1, min(batch, 64))
        }
    }

    /// How the run went.
    public struct Result: Sendable {
        public var stats: MediaSender.Stats
        /// Every event but `.finished`, in order.
        public var events: [MediaSender.Event]
        /// Why reading the frames failed, if it did (the stream ended after what was sent).
        public var sourceFailure: String?
        /// Whether the sender finished (false: stopped from outside).
        public var completed: Bool
        public var started: Instant
        /// When the last original packet left.
        public var lastMediaSent: Instant?
        public var ended: Instant
        public var impairment: Impairment<Datagram>.Stats?
    }

    /// A datagram and where it goes.
    public typealias Datagram = (payload: [UInt8], to: Endpoint)

    public let loop: EventLoop
    public let socket: UDPSocket
    public let options: Options
    // Loop-confined state.
    private var sender: MediaSender
    private var source: VideoFileSource?
    /// Whether frames remain to read (the source is dropped at its end or on a read error).
    private var sourceOpen: Bool
    private var sourceFailure: String?
    private var impairment: Impairment<Datagram>?
    private var batch: [Datagram] = []
    /// Datagrams the kernel did not take yet (the socket would block).
    private var blocked: [Datagram] = []
    private var events: [MediaSender.Event] = []
    private var timer: EventLoop.Timer?
    private var timerDue: Instant?
    private var writable = false
    private var started: Instant?
    private var lastMediaSent: Instant?
    private var finished = false
    private var onFinish: ((Result) -> Void)?

    /// A runner of `sender`, fed the frames of `source` (nil: the sender holds its frames already).
    public init(sender: MediaSender, source: VideoFileSource?, socket: UDPSocket, loop: EventLoop,
                options: Options) {
        self.sender = sender
        self.source = source
        sourceOpen = source != nil
        self.socket = socket
        self.loop = loop
        self.options = options
        impairment = options.impairment.map { Impairment(spec: $0) }
        batch.reserveCapacity(options.batch)
    }

    /// Starts sending (from any thread); `onFinish` runs once, on the loop's thread.
    public func start(onFinish: @escaping @Sendable (Result) -> Void) {
        loop.execute { [self] in
            self.onFinish = onFinish
            started = loop.clock.now()
            do {
                try loop.register(socket.fd, interest: .readable) { [weak self] _ in self?.pump() }
            } catch {
                complete(completed: false)
                return
            }
            pump()
        }
    }

    /// Ends the run early (from any thread); `onFinish` reports what was done.
    public func stop() {
        loop.execute { [self] in complete(completed: false) }
    }

    // MARK: The loop

    private func pump() {
        guard !finished else { return }
        let now = loop.clock.now()
        sender.handle(.timer, now: now)
        socket.receiveAll { bytes, _ in
            sender.handle(.rtcp(Array(bytes)), now: now)
        }
        if !blocked.isEmpty {
            let sent = socket.send(blocked)
            blocked.removeFirst(sent)
        }
        if blocked.isEmpty {
            impairment?.handle(.timer, now: now)
            while let datagram = impairment?.pollOutput() { enqueue(datagram) }
            drain(now: now)
        }
        if sender.isFinished && blocked.isEmpty && (impairment?.count ?? 0) == 0 {
            complete(completed: true)
            return
        }
        rearm(now: now)
    }

    /// Takes the sender's output, a bounded amount per wake-up so RTCP is read in between, and
    /// keeps it fed with frames.
    private func drain(now: Instant) {
        var budget = 1024
        feed(now: now)
        while budget > 0, blocked.isEmpty {
            guard let output = sender.pollOutput() else {
                // Out of frames, or waiting (pacing, the window): frames read now may go on at once.
                guard feed(now: now) else { break }
                continue
            }
            budget -= 1
            switch output {
            case .rtp(let bytes):
                lastMediaSent = now
                route((bytes, options.rtpDestination), now: now)
            case .rtcp(let bytes):
                route((bytes, options.rtcpDestination), now: now)
            case .event(let event):
                if event != .finished { events.append(event) }
            }
        }
        // Stopped by the budget or the socket: keep the sender fed, or it would wait for a timer.
        feed(now: now)
        flush()
    }

    /// Reads frames while the sender wants them; at the end of the file, or on a read error, the
    /// stream ends. Returns whether it handed anything over.
    @discardableResult
    private func feed(now: Instant) -> Bool {
        guard sourceOpen else { return false }
        var fed = false
        while sender.framesWanted > 0 {
            fed = true
            do {
                if let frame = try source!.nextFrame() {
                    sender.handle(.frame(frame), now: now)
                    continue
                }
            } catch {
                sourceFailure = "\(error)"
            }
            source = nil
            sourceOpen = false
            sender.handle(.endOfStream, now: now)
        }
        return fed
    }

    private func route(_ datagram: Datagram, now: Instant) {
        if impairment != nil {
            impairment?.handle(.submit(datagram), now: now)
            while let due = impairment!.pollOutput() { enqueue(due) }
        } else {
            enqueue(datagram)
        }
    }

    private func enqueue(_ datagram: Datagram) {
        batch.append(datagram)
        if batch.count >= options.batch { flush() }
    }

    private func flush() {
        guard !batch.isEmpty else { return }
        if !blocked.isEmpty {
            blocked += batch
        } else {
            let sent = socket.send(batch)
            if sent < batch.count { blocked += batch[sent...] }
        }
        batch.removeAll(keepingCapacity: true)
    }

    /// Watches for writability while output waits, and sets the timer for the next deadline.
    private func rearm(now: Instant) {
        let ready = !blocked.isEmpty || (sender.nextDeadline.map { $0 <= now } ?? false)
        if ready != writable {
            writable = ready
            loop.setInterest(socket.fd, ready ? [.readable, .writable] : .readable)
        }
        let next = [sender.nextDeadline, impairment?.nextDeadline].compactMap { $0 }.min()
        guard let next, next > now, next != timerDue else { return }
        if let timer { loop.cancel(timer) }
        timerDue = next
        timer = loop.schedule(at: next) { [weak self] in
            self?.timerDue = nil
            self?.pump()
        }
    }

    private func complete(completed: Bool) {
        guard !finished else { return }
        finished = true
        if let timer { loop.cancel(timer) }
        loop.deregister(socket.fd)
        let result = Result(stats: sender.stats, events: events, sourceFailure: sourceFailure,
                            completed: completed, started: started ?? loop.clock.now(), lastMediaSent: lastMediaSent,
                            ended: loop.clock.now(), impairment: impairment?.stats)
        onFinish?(result)
        onFinish = nil
    }
}
