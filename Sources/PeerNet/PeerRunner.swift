// In its own module (PeerNet) so that Peer, and the simulator that links it, carry no epoll code.
// The real driver of a `PeerCall`: UDP sockets on an epoll loop, the wall clock, and a store
// client. It moves datagrams, store replies, pushes and time into the machine and carries out
// what comes out. Every machine access happens on the loop's thread: store requests run as
// tasks whose executor is the loop, several at once (`StoreRequestQueue`: bounded, saves of the
// same record in the order the machine asked for them), so a poll never holds up a
// push-triggered fetch.

import Foundation
import ICE
import Net
import Peer
import RecordStore
import Signaling
import Synchronization
import ZoneCore

/// Runs one peer's call on real sockets until it ends.
public final class PeerRunner: @unchecked Sendable {
    /// What the driver adds to the call (when the call ends is the call's own `lifetime`).
    public struct Options: Sendable {
        /// Seeded impairment of outgoing datagrams (loss, delay, jitter, reorder, duplication):
        /// the kernel here has no netem, so the peer impairs its own datagram path.
        public var impairment: ImpairmentSpec?
        /// The longest the goodbye (hang-up saves, GC) may take before the runner gives up on it.
        public var goodbyeTimeout: Duration = .seconds(5)
        /// The most store requests in flight at once (a CloudKit client's operation queue runs a
        /// few at a time too); 1 runs them one after the other.
        public var storeRequestsInFlight = 4

        public init() {}
    }

    /// How the call ended.
    public enum Outcome: Sendable, Equatable {
        case completed
        case failed(String)
        case interrupted
    }

    public let loop: EventLoop
    public let options: Options
    private let client: any StoreClient
    private var call: PeerCall
    private var sockets: [Endpoint: UDPSocket] = [:]
    private var storeQueue: StoreRequestQueue<CallSignaling.Origin>
    private var timer: EventLoop.Timer?
    private var timerAt: Instant?
    private var pushTask: Task<Void, Never>?
    private var goodbyeTimer: EventLoop.Timer?
    private var outcome: Outcome?
    private var continuation: CheckedContinuation<Outcome, Never>?
    private var pendingSends: [Endpoint: [(payload: [UInt8], to: Endpoint)]] = [:]
    private var impairment: Impairment<Transmit>?
    /// Called on the loop's thread for every event of the call (progress lines, logs).
    private let observer: @Sendable (PeerCall.Event, PeerCall) -> Void
    private let snapshot = Mutex<PeerCallSnapshot?>(nil)
    private let log = Logger(component: "peer")

    public struct Transmit: Sendable {
        var bytes: [UInt8]
        var from: Endpoint
        var to: Endpoint
    }

    /// `sockets` are bound already; their local endpoints must be the call's host addresses.
    public init(call: PeerCall, client: any StoreClient, sockets: [UDPSocket], options: Options = Options(),
                observer: @escaping @Sendable (PeerCall.Event, PeerCall) -> Void = { _, _ in }) throws {
        self.call = call
        self.client = client
        self.options = options
        self.observer = observer
        storeQueue = StoreRequestQueue(limit: options.storeRequestsInFlight)
        loop = try EventLoop(name: "zonertc-peer")
        for socket in sockets { self.sockets[socket.localEndpoint] = socket }
        if let spec = options.impairment, !spec.isNeutral { impairment = Impairment(spec: spec) }
    }

    /// Starts the call and returns how it ended. The sockets are closed afterwards.
    public func run() async -> Outcome {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            loop.execute { [self] in
                self.continuation = continuation
                self.begin()
            }
            loop.start()
        }
        return outcome
    }

    /// Ends the call from any thread (SIGINT, SIGTERM): goodbye through the store, then stop.
    public func interrupt() {
        loop.execute { [self] in
            guard outcome == nil, !call.hasHungUp else { return }
            interrupted = true
            call.handle(.hangUp, now: loop.clock.now())
            pump()
        }
    }

    /// The call as it ends (milestones, counters, media statistics), once `run` returned.
    public var final: PeerCallSnapshot? { snapshot.withLock { $0 } }

    // MARK: - Loop thread

    private var interrupted = false

    private func begin() {
        for (endpoint, socket) in sockets {
            do {
                try loop.register(socket.fd, interest: .readable) { [self] _ in self.readable(endpoint) }
            } catch {
                finish(.failed("cannot watch the socket on \(endpoint): \(error)"))
                return
            }
        }
        // The push stream is opened before the call starts, so no record saved after the call's
        // first fetch can go unannounced.
        pushTask = Task(executorPreference: loop) { [self] in
            let stream = try? await client.notifications()
            guard outcome == nil else { return }
            call.handle(.start, now: loop.clock.now())
            pump()
            guard let stream else { return }  // without push, the strategy's polls find every record
            for await note in stream {
                guard outcome == nil else { return }
                call.handle(.signaling(.notification(note)), now: loop.clock.now())
                pump()
            }
        }
    }

    private func readable(_ endpoint: Endpoint) {
        guard let socket = sockets[endpoint] else { return }
        let now = loop.clock.now()
        var batch: [([UInt8], Endpoint)] = []
        _ = socket.receiveAll { buffer, from in batch.append((Array(buffer), from)) }
        for (bytes, from) in batch { call.handle(.datagram(bytes, from: from, to: endpoint), now: now) }
        pump()
    }

    /// Carries out everything the machine asked for, then sets the timer to its next deadline.
    private func pump() {
        let now = loop.clock.now()
        while let output = call.pollOutput() {
            switch output {
            case .store(let request, let origin):
                storeQueue.enqueue(request, tag: origin)
            case .transmit(let bytes, let from, let to):
                if impairment != nil {
                    impairment!.handle(.submit(Transmit(bytes: bytes, from: from, to: to)), now: now)
                } else {
                    pendingSends[from, default: []].append((bytes, to))
                }
            case .event(let event):
                observe(event, now: now)
            }
        }
        releaseImpaired(now: now)
        flushSends()
        startStoreRequests()
        rescheduleTimer()
        finishIfDone()
    }

    private func releaseImpaired(now: Instant) {
        guard impairment != nil else { return }
        impairment!.handle(.timer, now: now)
        while let due = impairment!.pollOutput() {
            pendingSends[due.from, default: []].append((due.bytes, due.to))
        }
    }

    /// What the impairment stage did (nil without one).
    public var impairmentStats: Impairment<Transmit>.Stats? { impairment?.stats }

    private func flushSends() {
        for (from, batch) in pendingSends where !batch.isEmpty {
            _ = sockets[from]?.send(batch)
        }
        pendingSends.removeAll(keepingCapacity: true)
    }

    private func observe(_ event: PeerCall.Event, now: Instant) {
        if case .ended = event, goodbyeTimer == nil {
            // The goodbye is store requests; a store that stopped answering must not hold us.
            goodbyeTimer = loop.schedule(at: now + options.goodbyeTimeout) { [self] in
                if outcome == nil { finishNow() }
            }
        }
        // What the other user wrote and we dropped: never a silent wait.
        switch event {
        case .rejectedRecord(let why): log.warning(why)
        case .remoteHungUp(let why): log.notice(why)
        case .sendFailed(let why): log.notice("media not sent: \(why)")
        case .selectedPair(let pair): log.info("selected pair \(pair)")
        case .ended(.failed(let why)): log.notice("call failed: \(why)")
        default: break
        }
        observer(event, call)
    }

    private func startStoreRequests() {
        while let (ticket, request, origin) = storeQueue.start() {
            Task(executorPreference: loop) { [self] in
                let result = await client.perform(request)
                storeQueue.finish(ticket)
                guard outcome == nil else { return }
                call.handle(.signaling(.reply(origin, result)), now: loop.clock.now())
                pump()
            }
        }
    }

    private func rescheduleTimer() {
        guard outcome == nil else { return }
        var next = call.nextDeadline
        if let due = impairment?.nextDeadline { next = min(next ?? due, due) }
        guard next != timerAt else { return }
        if let timer { loop.cancel(timer) }
        timerAt = next
        guard let next else {
            timer = nil
            return
        }
        timer = loop.schedule(at: next) { [self] in
            timer = nil
            timerAt = nil
            call.handle(.timer, now: loop.clock.now())
            self.pump()
        }
    }

    private func finishIfDone() {
        guard call.hasHungUp, outcome == nil, storeQueue.isIdle else { return }
        finishNow()
    }

    private func finishNow() {
        switch (interrupted, call.ending) {
        case (true, _): finish(.interrupted)
        case (false, .failed(let why)): finish(.failed(why))
        case (false, _): finish(.completed)
        }
    }

    private func finish(_ result: Outcome) {
        guard outcome == nil else { return }
        outcome = result
        pushTask?.cancel()
        snapshot.withLock { $0 = PeerCallSnapshot(call) }
        for (_, socket) in sockets { loop.deregister(socket.fd) }
        if let timer { loop.cancel(timer) }
        loop.stop()
        continuation?.resume(returning: result)
        continuation = nil
    }
}
