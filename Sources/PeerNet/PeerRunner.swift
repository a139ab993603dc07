// In its own module (PeerNet) so that Peer, and the simulator that links it, carry no epoll code.
// The real driver of a call — a `PeerCall` (`PeerRunner`) or a room's group call, `RoomCall`
// (`RoomRunner`), whose legs share the sockets (`DrivenCall` says what the driver needs of either): UDP sockets on an epoll loop, the wall clock, and a store
// client. It moves datagrams, store replies, pushes and time into the machine and carries out
// what comes out. Every machine access happens on the loop's thread: store requests run as
// tasks whose executor is the loop, several at once (`StoreRequestQueue`: bounded, saves of the
// same record in the order the machine asked for them), so a poll never holds up a
// push-triggered fetch. The run ends when the call is closed (hung up, every transport drained)
// and the store requests it asked for are answered — or, for a store that stopped answering,
// `goodbyeTimeout` after the hang-up.

import Foundation
import ICE
import Net
import Peer
import RecordStore
import Signaling
import Synchronization
import ZoneCore

/// Runs one peer's call of two on real sockets until it ends.
public typealias PeerRunner = CallRunner<PeerCall>

/// Runs one peer's group call in a room on real sockets until it has left and every leg is drained.
public typealias RoomRunner = CallRunner<RoomCall>

/// Runs one peer's call on real sockets until it ends.
public final class CallRunner<Call: DrivenCall & ~Copyable>: @unchecked Sendable {
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
        /// The push stream, when the caller began opening it earlier (beside its own setup, so the
        /// call does not wait for the stream's round trip after it); nil: the runner opens it.
        public var pushStream: Task<AsyncStream<PushNotification>, any Error>?

        public init() {}
    }

    /// How the call ended.
    public enum Outcome: Sendable, Equatable {
        case completed
        case failed(String)
        case interrupted
    }

    /// What the driver itself dropped or did without: for the summary.
    public struct Report: Sendable, Equatable {
        /// Datagrams the kernel refused to send (a full socket buffer, an unreachable address).
        public var unsentDatagrams = 0
        /// Why push notifications could not be had, when they could not: the call then learned of
        /// records only by its strategy's polls.
        public var pushUnavailable: String?
        /// Whether the goodbye timed out: the store did not answer the hang-up's requests, or
        /// the transports were not drained, within `goodbyeTimeout`.
        public var goodbyeTimedOut = false

        public init() {}
    }

    public let loop: EventLoop
    public let options: Options
    private let client: any StoreClient
    private var call: Call
    private var report = Report()
    private var sockets: [Endpoint: UDPSocket] = [:]
    /// Each request with when it was asked for (monotonic ns), for the debug line that times it.
    private var storeQueue: StoreRequestQueue<(Call.Origin, UInt64)>
    private var timer: EventLoop.Timer?
    private var timerAt: Instant?
    private var pushTask: Task<Void, Never>?
    private var goodbyeTimer: EventLoop.Timer?
    private var outcome: Outcome?
    private var continuation: CheckedContinuation<Outcome, Never>?
    private var pendingSends: [Endpoint: [(payload: [UInt8], to: Endpoint)]] = [:]
    private var impairment: Impairment<Transmit>?
    /// Called on the loop's thread for every event of the call (progress lines, logs).
    private let observer: @Sendable (Call.Event, borrowing Call) -> Void
    private let snapshot = Mutex<(Call.Snapshot, Report)?>(nil)
    private let log = Logger(component: "peer")

    public struct Transmit: Sendable {
        var bytes: [UInt8]
        var from: Endpoint
        var to: Endpoint
    }

    /// `sockets` are bound already; their local endpoints must be the call's host addresses.
    public init(call: consuming Call, client: any StoreClient, sockets: [UDPSocket], options: Options = Options(),
                observer: @escaping @Sendable (Call.Event, borrowing Call) -> Void = { _, _ in }) throws {
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
            call.hangUp(now: loop.clock.now())
            pump()
        }
    }

    /// The call as it ends (milestones, counters, media statistics), once `run` returned.
    public var final: Call.Snapshot? { snapshot.withLock { $0?.0 } }

    /// What the driver dropped, once `run` returned.
    public var finalReport: Report? { snapshot.withLock { $0?.1 } }

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
            var stream: AsyncStream<PushNotification>?
            do {
                if let early = options.pushStream {
                    stream = try await early.value
                } else {
                    stream = try await client.notifications()
                }
            } catch {
                // Without push, the strategy's polls find every record (slower: say so).
                report.pushUnavailable = "\(error)"
                log.warning("no push notifications (\(error)): the call learns of records by polling only")
            }
            guard outcome == nil else { return }
            call.start(now: loop.clock.now())
            pump()
            guard let stream else { return }
            for await note in stream {
                guard outcome == nil else { return }
                if log.isEnabled(.debug) {
                    log.debug("push handled", ["id": "\(note.notificationID)",
                                               "mono": "\(Stopwatch.monotonicNanoseconds() / 1000)"])
                }
                call.notify(note, now: loop.clock.now())
                pump()
            }
        }
    }

    private func readable(_ endpoint: Endpoint) {
        guard let socket = sockets[endpoint] else { return }
        let now = loop.clock.now()
        var batch: [([UInt8], Endpoint)] = []
        _ = socket.receiveAll { buffer, from in batch.append((Array(buffer), from)) }
        for (bytes, from) in batch { call.receive(bytes, from: from, to: endpoint, now: now) }
        pump()
    }

    /// Carries out everything the machine asked for, then sets the timer to its next deadline.
    private func pump() {
        let now = loop.clock.now()
        while let output = call.nextDriverOutput() {
            switch output {
            case .store(let request, let origin):
                storeQueue.enqueue(request, tag: (origin, Stopwatch.monotonicNanoseconds()))
            case .transmit(let bytes, let from, let to):
                if impairment != nil {
                    impairment?.handle(.submit(Transmit(bytes: bytes, from: from, to: to)), now: now)
                } else {
                    pendingSends[from, default: []].append((bytes, to))
                }
            case .event(let event):
                observe(event, now: now)
            }
        }
        boundGoodbye(now: now)
        releaseImpaired(now: now)
        flushSends()
        startStoreRequests()
        rescheduleTimer()
        finishIfDone()
    }

    private func releaseImpaired(now: Instant) {
        guard impairment != nil else { return }
        impairment?.handle(.timer, now: now)
        while let due = impairment?.pollOutput() {
            pendingSends[due.from, default: []].append((due.bytes, due.to))
        }
    }

    /// What the impairment stage did (nil without one).
    public var impairmentStats: Impairment<Transmit>.Stats? { impairment?.stats }

    private func flushSends() {
        for (from, batch) in pendingSends where !batch.isEmpty {
            let sent = sockets[from]?.send(batch) ?? 0
            guard sent < batch.count else { continue }
            if report.unsentDatagrams == 0 {
                log.warning("the socket on \(from) refused datagrams (counted from now on in the summary)")
            }
            report.unsentDatagrams += batch.count - sent
        }
        pendingSends.removeAll(keepingCapacity: true)
    }

    /// The goodbye is store requests; a store that stopped answering must not hold us.
    private func boundGoodbye(now: Instant) {
        guard call.hasHungUp, goodbyeTimer == nil, outcome == nil else { return }
        goodbyeTimer = loop.schedule(at: now + options.goodbyeTimeout) { [self] in
            guard outcome == nil else { return }
            report.goodbyeTimedOut = true
            log.warning("the goodbye took longer than \(options.goodbyeTimeout) (\(storeQueue.inFlightCount) store "
                        + "request(s) unanswered, call \(call.isClosed ? "closed" : "still closing")): stopping")
            finishNow()
        }
    }

    private func observe(_ event: Call.Event, now: Instant) {
        // What the other user wrote and we dropped: never a silent wait.
        if let (level, line) = Call.logLine(event) { log.log(level, line) }
        observer(event, call)
    }

    private func startStoreRequests() {
        while let (ticket, request, (origin, asked)) = storeQueue.start() {
            let started = Stopwatch.monotonicNanoseconds()
            Task(executorPreference: loop) { [self] in
                let result = await client.perform(request)
                let answered = Stopwatch.monotonicNanoseconds()
                storeQueue.finish(ticket)
                guard outcome == nil else { return }
                call.storeReplied(origin, result, now: loop.clock.now())
                pump()
                if log.isEnabled(.debug) {
                    logStoreTiming(request, result, asked: asked, started: started, answered: answered)
                }
            }
        }
    }

    /// One line per store request: `waitMs` queued behind others, `ms` the round trip, `actMs` acting on
    /// the answer (the call's handling and what it asked next); `mono` (µs) matches the daemon's lines.
    private func logStoreTiming(_ request: StoreRequest, _ result: StoreOutcome, asked: UInt64, started: UInt64,
                                answered: UInt64) {
        let acted = Stopwatch.monotonicNanoseconds()
        func ms(_ ns: UInt64) -> String { String(format: "%.3f", Double(ns) / 1e6) }
        var fields = ["waitMs": ms(started &- asked), "ms": ms(answered &- started), "actMs": ms(acted &- answered),
                      "mono": "\(acted / 1000)", "queued": "\(storeQueue.waitingCount)"]
        let kind: String
        switch request.operation {
        case .modifyRecords(let r): kind = "modify"; fields["records"] = "\(r.operations.count)"
        case .lookupRecords(let ids): kind = "lookup"; fields["records"] = "\(ids.count)"
        case .fetchZoneChanges: kind = "zone-changes"
        case .fetchDatabaseChanges: kind = "database-changes"
        default: kind = "setup"
        }
        if case .zoneChanges(let changes) = result { fields["records"] = "\(changes.changed.count)" }
        log.debug("store \(kind)", fields)
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
            call.timer(now: loop.clock.now())
            self.pump()
        }
    }

    /// Stops once the call is closed and its store requests are answered.
    private func finishIfDone() {
        guard call.isClosed, outcome == nil, storeQueue.isIdle else { return }
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
        let final = (call.snapshot(), report)
        snapshot.withLock { $0 = final }
        for (_, socket) in sockets { loop.deregister(socket.fd) }
        if let timer { loop.cancel(timer) }
        loop.stop()
        continuation?.resume(returning: result)
        continuation = nil
    }
}
