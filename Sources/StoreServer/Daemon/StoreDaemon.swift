import Foundation
import Net
import RecordStore
import Synchronization
import ZoneCore

/// The store served over HTTP/1.1 on an event loop: connections, the JSON API, push streams.
///
/// The loop thread moves bytes and runs each connection's `HTTPServerConnection` machine, and
/// nothing else: the API runs as tasks on the daemon's worker threads (`ThreadPool`) and posts
/// responses back to the loop, so the loop never waits for the store's lock, a journal sync, the
/// user log or PostgreSQL. Push streams follow the store's delivery model and send one server-sent
/// event per notification, encoded on a worker.
///
/// Overload: past `maxRequestsInFlight` a request is answered at once with 503 `TRY_AGAIN_LATER`
/// and a `retryAfter` (CloudKit Web Services' code for "try the request again"), without touching
/// the store; push streams already open go on, and a stream whose client stops reading is closed
/// once its backlog passes `maxStreamBacklog` rather than held in memory. Per-connection events
/// are logged at debug; a summary line at info every `summaryInterval`.
public final class StoreDaemon: @unchecked Sendable {
    public struct Options: Sendable {
        public var listen: Endpoint
        public var maxConnections = 1024
        /// Connections one client address may hold (`ConnectionAdmission`).
        public var maxConnectionsPerAddress = 256
        /// How long a connection is idle before a full daemon may evict it for a newcomer.
        public var evictableAfterIdle: Duration = .seconds(2)
        public var limits = HTTPServerConnection.Limits()
        /// A comment line on idle push streams, so dead peers are found and proxies keep them open.
        public var heartbeat: Duration = .seconds(15)
        /// Requests being answered at once; more are shed with 503 `TRY_AGAIN_LATER` until some finish.
        /// The work queued behind this many is about half a second on one core.
        public var maxRequestsInFlight = 10_000
        /// The `retryAfter` (seconds) of a shed request.
        public var retryAfterWhenShedding: Double = 1
        /// Bytes a push stream may have waiting for its client before it is closed as too slow.
        public var maxStreamBacklog = 1 << 20
        /// How often a summary line (connections, streams, requests/s, pushes, shed) is logged at
        /// info, when anything happened since the last; nil: never.
        public var summaryInterval: Duration? = .seconds(60)
        /// Threads running requests (the store's lock orders its operations; the rest, JSON and
        /// push events, runs on as many at once).
        public var workers = max(2, ProcessInfo.processInfo.activeProcessorCount)
        /// Where asset uploads over the in-memory body limit are written as they arrive (nil: the
        /// system's temporary directory). Beside the asset files (same file system), an accepted
        /// upload is moved into place rather than copied.
        public var spoolDirectory: String?

        public init(listen: Endpoint) {
            self.listen = listen
            limits.streaming = AssetRoutes.streaming
        }
    }

    /// Counters for the operator.
    public struct Counters: Sendable, Equatable {
        public var accepted = 0
        public var refused = 0
        /// Idle connections closed to make room for a newcomer.
        public var evicted = 0
        public var requests = 0
        /// Push streams opened.
        public var streams = 0
        /// Requests answered 503 at once because `maxRequestsInFlight` were under way.
        public var shed = 0
        /// Events written to push streams (notifications, not heartbeats).
        public var pushes = 0
        /// Push streams closed because their client did not read (`maxStreamBacklog`).
        public var slowStreamsClosed = 0
        /// Times accepting paused because the process ran out of file descriptors.
        public var acceptPauses = 0
        /// Connections held now.
        public var connections = 0
        /// Push streams open now.
        public var openStreams = 0
        /// Requests being answered now.
        public var requestsInFlight = 0
    }

    public let api: StoreAPI
    public let options: Options
    public let endpoint: Endpoint
    private let loop: EventLoop
    /// Where requests and push streams run.
    private let workers: ThreadPool
    private let listenFD: Int32
    private let log = Logger(component: "store-serve")
    // Loop-confined.
    private var connections: [UInt64: Served] = [:]
    private var admission: ConnectionAdmission
    private var nextID: UInt64 = 0
    /// Spools made, for their file names.
    private var spoolCount: UInt64 = 0
    private var counters = Counters()
    private var lastSummary: (at: Instant, counters: Counters)?
    private let stopping = Atomic<Bool>(false)
    /// Accepted per readiness report, so a flood of connections cannot starve the open ones.
    private static let acceptBatch = 256

    private final class Served {
        let id: UInt64
        let tcp: TCPConnection
        var machine: HTTPServerConnection
        var timer: EventLoop.Timer?
        var timerAt: Instant?
        var streamTask: Task<Void, Never>?
        var heartbeat: EventLoop.Timer?
        /// What admission last heard of this connection's `idleSince`.
        var reportedIdleSince: Instant?
        /// The request whose body is being spooled, and its spool.
        var spooling: (request: HTTPRequest, spool: BodySpool)?

        init(id: UInt64, tcp: TCPConnection, machine: HTTPServerConnection) {
            self.id = id
            self.tcp = tcp
            self.machine = machine
        }
    }

    public init(api: StoreAPI, options: Options) throws {
        self.api = api
        self.options = options
        loop = try EventLoop(name: "zonertc-store-serve")
        workers = ThreadPool(maxThreads: options.workers, name: "zonertc-store-work")
        (listenFD, endpoint) = try TCPSocket.listen(on: options.listen, backlog: 4096)
        var limits = ConnectionAdmission.Limits()
        limits.maxConnections = options.maxConnections
        limits.maxPerAddress = options.maxConnectionsPerAddress
        limits.evictableAfterIdle = options.evictableAfterIdle
        admission = ConnectionAdmission(limits: limits)
    }

    /// The counters, read on the loop.
    public func currentCounters() async -> Counters {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in continuation.resume(returning: snapshot()) }
        }
    }

    /// Work a connection admission has looked at so far (`ConnectionAdmission.examined`), for tests.
    public func admissionWork() async -> Int {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in continuation.resume(returning: admission.examined) }
        }
    }

    /// Starts accepting connections on the loop's thread.
    public func start() throws {
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        loop.execute { [self] in
            do {
                try loop.register(listenFD, interest: .readable) { [weak self] _ in self?.acceptAll() }
            } catch {
                failure = error
            }
            lastSummary = (loop.clock.now(), snapshot())
            scheduleSummary()
            ready.signal()
        }
        loop.start()
        ready.wait()
        if let failure { throw failure }
    }

    /// Stops accepting, ends push streams and connections, and stops the loop. Returns whether the
    /// loop did so within `limit`; the loop is told to stop either way, so a caller never waits longer.
    @discardableResult
    public func stop(within limit: Duration = .seconds(5)) -> Bool {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return true }
        // Waiting web long-polls are answered empty now rather than at their timeout.
        api.webcourier.stop()
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            loop.deregister(listenFD)
            close(listenFD)
            for c in connections.values {
                endStream(c)
                c.tcp.close()
            }
            connections.removeAll()
            done.signal()
        }
        let stopped = done.wait(timeout: .now() + Double(limit.nanoseconds) / 1e9) == .success
        loop.stop()
        return stopped
    }

    // MARK: On the loop

    private func acceptAll() {
        for _ in 0..<Self.acceptBatch {
            let accepted: (Int32, Endpoint?)?
            do { accepted = try TCPSocket.accept(listenFD) } catch let e as SocketError
                where e.code == EMFILE || e.code == ENFILE {
                pauseAccepting(e)
                return
            } catch {
                log.warning("accept failed", ["error": "\(error)"])
                return
            }
            guard let (fd, peer) = accepted else { return }
            switch admission.decide(newcomer: peer?.address, now: loop.clock.now()) {
            case .admit:
                break
            case .admitEvicting(let id):
                counters.evicted += 1
                if let victim = connections[id] {
                    log.debug("evicted an idle connection for a newcomer",
                              ["peer": "\(victim.tcp.peer.map { "\($0)" } ?? "-")"])
                    victim.tcp.close()
                }
            case .refuse(let reason):
                counters.refused += 1
                let error = StoreError(.serviceUnavailable, reason, retryAfter: 1)
                let body = WireFormat.serialize(WireFormat.encode(error))
                let bytes = HTTPResponse.json(503, body).serialized(keepAlive: false)
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            counters.accepted += 1
            nextID += 1
            let tcp = TCPConnection(fd: fd, peer: peer, loop: loop)
            let served = Served(id: nextID, tcp: tcp, machine: HTTPServerConnection(limits: options.limits, now: loop.clock.now()))
            connections[served.id] = served
            let id = served.id
            tcp.onData = { [weak self] bytes in self?.received(id, bytes) }
            tcp.onClose = { [weak self] in self?.closed(id) }
            tcp.onReadEnd = { [weak self] in self?.readEnded(id) }
            do { try tcp.start() } catch {
                connections[id] = nil
                close(fd)
                continue
            }
            served.reportedIdleSince = served.machine.idleSince
            admission.opened(.init(id: id, address: peer?.address, idleSince: served.reportedIdleSince))
            reschedule(served)
        }
    }

    /// Out of file descriptors: stop watching the listening socket for a moment instead of being
    /// woken for it again and again; connections wait in the backlog meanwhile.
    private func pauseAccepting(_ error: SocketError) {
        counters.acceptPauses += 1
        log.warning("accepting paused: out of file descriptors", ["error": "\(error)",
                                                                   "connections": "\(connections.count)"])
        loop.setInterest(listenFD, [])
        loop.schedule(at: loop.clock.now() + .milliseconds(100)) { [weak self] in
            guard let self, !self.stopping.load(ordering: .relaxed) else { return }
            self.loop.setInterest(self.listenFD, .readable)
        }
    }

    private func received(_ id: UInt64, _ bytes: ArraySlice<UInt8>) {
        guard let c = connections[id] else { return }
        feed(.received(bytes), to: c)
    }

    /// The client half-closed: it is still answered (see `HTTPServerConnection.peerFinishedSending`).
    private func readEnded(_ id: UInt64) {
        guard let c = connections[id] else { return }
        feed(.peerFinishedSending, to: c)
    }

    private func closed(_ id: UInt64) {
        guard let c = connections.removeValue(forKey: id) else { return }
        admission.closed(id)
        c.machine.handle(.peerClosed, now: loop.clock.now())
        c.spooling?.spool.discard()
        c.spooling = nil
        if c.streamTask != nil { counters.openStreams -= 1 }
        endStream(c)
        if let t = c.timer { loop.cancel(t) }
        if let t = c.heartbeat { loop.cancel(t) }
    }

    /// Feeds the connection's machine and carries out everything it asks, in order.
    private func feed(_ input: HTTPServerConnection.Input, to c: Served) {
        c.machine.handle(input, now: loop.clock.now())
        var answerNow: HTTPResponse?
        while let action = c.machine.pollOutput() {
            switch action {
            case .send(let bytes):
                c.tcp.send(bytes)
            case .close:
                c.tcp.closeAfterFlush()
            case .checkStreamedHead(let request, _):
                // Nothing of the body is read until the head is judged: a refused upload costs no disk.
                c.tcp.pauseReading(true)
                checkUploadHead(request, on: c.id)
            case .beginSpool(let request, let length):
                spoolCount += 1
                let directory = options.spoolDirectory ?? FileManager.default.temporaryDirectory.path
                c.spooling = (request, BodySpool(directory: directory, length: length, id: spoolCount))
            case .spool(let bytes):
                c.spooling?.spool.write(bytes)
            case .discardSpool:
                c.spooling?.spool.discard()
                c.spooling = nil
            case .dispatchSpooled:
                guard let (request, spool) = c.spooling else { continue }
                counters.requests += 1
                guard let body = spool.finish() else {
                    log.warning("upload not kept", ["error": spool.failure ?? ""])
                    spool.discard()
                    c.spooling = nil
                    answerNow = .json(500, WireFormat.serialize(WireFormat.encode(
                        StoreError(.internalError, spool.failure ?? "the upload could not be kept"))))
                    continue
                }
                var spooled = request
                spooled.spooledBody = body
                dispatch(spooled, on: c.id)
            case .dispatch(let request):
                counters.requests += 1
                if request.path == "/health" {
                    // The loop's own liveness, answered here: it holds whatever the workers are doing.
                    answerNow = StoreAPI.healthy
                } else if counters.requestsInFlight >= options.maxRequestsInFlight {
                    counters.shed += 1
                    answerNow = shedResponse()
                } else {
                    dispatch(request, on: c.id)
                }
            }
        }
        if let answerNow {
            feed(.respond(answerNow), to: c)
            return
        }
        reschedule(c)
        let idleSince = c.machine.idleSince
        if idleSince != c.reportedIdleSince, !c.tcp.isClosed {
            c.reportedIdleSince = idleSince
            admission.update(c.id, idleSince: idleSince)
        }
    }

    /// Asks the API whether to take the body of an upload whose head came (`.checkStreamedHead`), on
    /// a worker (the check may read the asset storage), then reads on or refuses.
    private func checkUploadHead(_ request: HTTPRequest, on id: UInt64) {
        let api = self.api
        Task(executorPreference: workers) { [self] in
            let refusal = await api.admitUploadBody(request)
            loop.execute { [self] in
                guard let c = connections[id] else { return }
                // A refused body is never read: the connection closes once the answer is out.
                if refusal == nil { c.tcp.pauseReading(false) }
                feed(.headChecked(refusal), to: c)
            }
        }
    }

    /// The answer to a request shed under overload: nothing of it reached the store.
    private func shedResponse() -> HTTPResponse {
        let retry = options.retryAfterWhenShedding
        let error = StoreError(.serviceUnavailable, "the store is overloaded (\(options.maxRequestsInFlight) requests "
                               + "in flight); nothing was done, retry after \(retry) s", retryAfter: retry)
        return HTTPResponse(status: 503, headers: HTTPHeaders([("Content-Type", "application/json"),
                                                                 ("Retry-After", "\(Int(retry.rounded(.up)))")]),
                            body: WireFormat.serialize(WireFormat.encode(error)))
    }

    /// Arms the connection's timer for the machine's `nextDeadline` (or disarms it).
    private func reschedule(_ c: Served) {
        guard let instant = c.machine.nextDeadline else {
            if let t = c.timer { loop.cancel(t) }
            c.timer = nil
            c.timerAt = nil
            return
        }
        if let at = c.timerAt, at == instant, c.timer != nil { return }
        if let t = c.timer { loop.cancel(t) }
        c.timerAt = instant
        c.timer = loop.schedule(at: instant) { [weak self, weak c] in
            guard let self, let c, !c.tcp.isClosed else { return }
            c.timer = nil
            self.feed(.timer, to: c)
        }
    }

    /// What a request came to, back on the loop.
    private enum Answer: Sendable {
        case response(HTTPResponse)
        /// A push stream, listening already.
        case stream(AsyncStream<PushNotification>, user: String, device: String)
    }

    private func dispatch(_ request: HTTPRequest, on id: UInt64) {
        counters.requestsInFlight += 1
        let api = self.api
        var timing = RequestTiming(dispatched: Stopwatch.monotonicNanoseconds())
        Task(executorPreference: workers) { [self] in
            timing.started = Stopwatch.monotonicNanoseconds()
            let answer: Answer
            switch await api.handle(request) {
            case .response(let r):
                answer = .response(r)
            case .eventStream(let user, let device):
                // Listen before answering, so nothing delivered after the client sees "ready" is missed.
                answer = .stream(api.store.push.listen(user: user, deviceID: device), user: user, device: device)
            }
            timing.handled = Stopwatch.monotonicNanoseconds()
            let done = timing
            loop.execute { [self] in self.finish(answer, on: id, request: request, timing: done) }
        }
    }

    private func finish(_ answer: Answer, on id: UInt64, request: HTTPRequest, timing: RequestTiming) {
        counters.requestsInFlight -= 1
        // A stream whose connection is gone ends when its last reference does (the hub drops it).
        guard let c = connections[id] else { return }
        // What the handler did not move away of an upload is not kept.
        c.spooling?.spool.discard()
        c.spooling = nil
        switch answer {
        case .response(let response):
            feed(.respond(response), to: c)
            if log.isEnabled(.debug) {
                // Where a request's time went: waiting for a worker, in the store, waiting for the loop.
                var fields = timing.fields(written: Stopwatch.monotonicNanoseconds())
                fields["bytes"] = "\(response.body.count)"
                fields["device"] = request.headers["X-Device-ID"] ?? "-"
                log.debug("\(request.method) \(request.path) \(response.status)", fields)
            }
        case .stream(let stream, let user, let device):
            openStream(c, stream, user: user, device: device)
        }
    }

    private func openStream(_ c: Served, _ stream: AsyncStream<PushNotification>, user: String, device: String) {
        counters.streams += 1
        counters.openStreams += 1
        log.debug("push stream opened", ["user": user, "device": device])
        let headers = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        feed(.startStream(status: 200, headers: headers), to: c)
        if let t = c.timer { loop.cancel(t); c.timer = nil }
        let id = c.id
        c.streamTask = Task(executorPreference: workers) { [self] in
            loop.execute { [self] in self.sendEvent(Array(": ready\n\n".utf8), to: id) }
            for await note in stream {
                let taken = Stopwatch.monotonicNanoseconds()
                let json = WireFormat.serialize(WireFormat.encode(note))
                var event: [UInt8] = []
                event.reserveCapacity(json.count + 32)
                event.append(contentsOf: "event: notification\ndata: ".utf8)
                event.append(contentsOf: json)
                event.append(contentsOf: "\n\n".utf8)
                let bytes = event
                loop.execute { [self] in
                    self.sendEvent(bytes, to: id, counted: true)
                    if log.isEnabled(.debug) {
                        let now = Stopwatch.monotonicNanoseconds()
                        log.debug("push written", ["device": device, "id": "\(note.notificationID)",
                                                   "loopMs": RequestTiming.ms(now &- taken), "mono": "\(now / 1000)"])
                    }
                }
            }
        }
        scheduleHeartbeat(c)
    }

    /// Ends a connection's push stream, if it has one. Cancelling runs the stream's termination
    /// handler, which takes the push hub's lock: on a worker, never on the loop.
    private func endStream(_ c: Served) {
        guard let task = c.streamTask else { return }
        workers.run { task.cancel() }
    }

    private func sendEvent(_ bytes: [UInt8], to id: UInt64, counted: Bool = false) {
        guard let c = connections[id] else { return }
        if c.tcp.pendingOutbound > options.maxStreamBacklog {
            counters.slowStreamsClosed += 1
            log.debug("closed a push stream whose client does not read",
                      ["peer": "\(c.tcp.peer.map { "\($0)" } ?? "-")", "backlog": "\(c.tcp.pendingOutbound)"])
            c.tcp.close()
            return
        }
        if counted { counters.pushes += 1 }
        feed(.streamChunk(bytes), to: c)
    }

    private func scheduleHeartbeat(_ c: Served) {
        c.heartbeat = loop.schedule(at: loop.clock.now() + options.heartbeat) { [weak self, weak c] in
            guard let self, let c, !c.tcp.isClosed else { return }
            self.feed(.streamChunk(Array(": keepalive\n\n".utf8)), to: c)
            self.scheduleHeartbeat(c)
        }
    }

    // MARK: The summary

    private func snapshot() -> Counters {
        var c = counters
        c.connections = connections.count
        return c
    }

    private func scheduleSummary() {
        guard let every = options.summaryInterval, every > .zero else { return }
        loop.schedule(at: loop.clock.now() + every) { [weak self] in
            guard let self, !self.stopping.load(ordering: .relaxed) else { return }
            self.logSummary()
            self.scheduleSummary()
        }
    }

    /// One line for the operator: what is held now and what happened since the last line.
    private func logSummary() {
        let now = loop.clock.now()
        let current = snapshot()
        guard let last = lastSummary else { return }
        lastSummary = (now, current)
        if current == last.counters { return }
        let seconds = max((now - last.at).seconds, 1e-3)
        func rate(_ n: Int) -> String { String(format: "%.1f", Double(n) / seconds) }
        log.info("serving", [
            "connections": "\(current.connections)", "streams": "\(current.openStreams)",
            "requests_per_s": rate(current.requests - last.counters.requests),
            "pushes_per_s": rate(current.pushes - last.counters.pushes),
            "in_flight": "\(current.requestsInFlight)", "shed": "\(current.shed)", "refused": "\(current.refused)",
            "evicted": "\(current.evicted)", "slow_streams_closed": "\(current.slowStreamsClosed)",
            "log_lines_dropped": "\(QueuedLogOutput.standardError.droppedLines)",
        ])
    }
}

/// When a request reached each step inside the daemon (monotonic nanoseconds), for its debug line.
private struct RequestTiming: Sendable {
    var dispatched: UInt64
    var started: UInt64 = 0
    var handled: UInt64 = 0

    static func ms(_ nanoseconds: UInt64) -> String { String(format: "%.3f", Double(nanoseconds) / 1e6) }

    /// `queuedMs`: dispatched on the loop until a worker took it; `ms`: in the store; `loopMs`: answered
    /// until the loop wrote it; `mono`: the monotonic clock then, in µs (the same clock in every process).
    func fields(written: UInt64) -> [String: String] {
        ["queuedMs": Self.ms(started &- dispatched), "ms": Self.ms(handled &- started),
         "loopMs": Self.ms(written &- handled), "mono": "\(written / 1000)"]
    }
}
