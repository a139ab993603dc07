import Foundation
import Net
import RecordStore
import ZoneCore

/// The store served over HTTP/1.1 on an event loop: connections, the JSON API, push streams.
///
/// The loop thread moves bytes and runs each connection's `HTTPServerConnection` machine; the
/// API runs as tasks and posts responses back to the loop. Push streams follow the store's
/// delivery model and send one server-sent event per notification.
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

        public init(listen: Endpoint) { self.listen = listen }
    }

    /// Counters for the operator.
    public struct Counters: Sendable {
        public var accepted = 0
        public var refused = 0
        /// Idle connections closed to make room for a newcomer.
        public var evicted = 0
        public var requests = 0
        public var streams = 0
    }

    public let api: StoreAPI
    public let options: Options
    public let endpoint: Endpoint
    private let loop: EventLoop
    private let listenFD: Int32
    private let log = Logger(component: "store-serve")
    // Loop-confined.
    private var connections: [UInt64: Served] = [:]
    private var nextID: UInt64 = 0
    private var counters = Counters()

    private final class Served {
        let id: UInt64
        let tcp: TCPConnection
        var machine: HTTPServerConnection
        var timer: EventLoop.Timer?
        var timerAt: Instant?
        var streamTask: Task<Void, Never>?
        var heartbeat: EventLoop.Timer?

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
        (listenFD, endpoint) = try TCPSocket.listen(on: options.listen)
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
            ready.signal()
        }
        loop.start()
        ready.wait()
        if let failure { throw failure }
    }

    /// Stops accepting, ends push streams and connections, and stops the loop.
    public func stop() {
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            loop.deregister(listenFD)
            close(listenFD)
            for c in connections.values {
                c.streamTask?.cancel()
                c.tcp.close()
            }
            connections.removeAll()
            done.signal()
        }
        done.wait()
        loop.stop()
    }

    // MARK: On the loop

    private func acceptAll() {
        while true {
            let accepted: (Int32, Endpoint?)?
            do { accepted = try TCPSocket.accept(listenFD) } catch {
                log.warning("accept failed", ["error": "\(error)"])
                return
            }
            guard let (fd, peer) = accepted else { return }
            switch admission(of: peer) {
            case .admit:
                break
            case .admitEvicting(let id):
                counters.evicted += 1
                if let victim = connections[id] {
                    log.info("evicted an idle connection for a newcomer",
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
            reschedule(served)
        }
    }

    private func received(_ id: UInt64, _ bytes: ArraySlice<UInt8>) {
        guard let c = connections[id] else { return }
        feed(.received(bytes), to: c)
    }

    /// Whether a connection from `peer` is taken; only looks at the held ones when near a limit.
    private func admission(of peer: Endpoint?) -> ConnectionAdmission.Decision {
        var limits = ConnectionAdmission.Limits()
        limits.maxConnections = options.maxConnections
        limits.maxPerAddress = options.maxConnectionsPerAddress
        limits.evictableAfterIdle = options.evictableAfterIdle
        guard connections.count >= min(limits.maxConnections, limits.maxPerAddress) else { return .admit }
        let held = connections.values.map {
            ConnectionAdmission.Held(id: $0.id, address: $0.tcp.peer?.address, idleSince: $0.machine.idleSince)
        }
        return ConnectionAdmission(limits: limits).decide(newcomer: peer?.address, held: held, now: loop.clock.now())
    }

    /// The client half-closed: it is still answered (see `HTTPServerConnection.peerFinishedSending`).
    private func readEnded(_ id: UInt64) {
        guard let c = connections[id] else { return }
        feed(.peerFinishedSending, to: c)
    }

    private func closed(_ id: UInt64) {
        guard let c = connections.removeValue(forKey: id) else { return }
        c.machine.handle(.peerClosed, now: loop.clock.now())
        c.streamTask?.cancel()
        if let t = c.timer { loop.cancel(t) }
        if let t = c.heartbeat { loop.cancel(t) }
    }

    /// Feeds the connection's machine and carries out everything it asks, in order.
    private func feed(_ input: HTTPServerConnection.Input, to c: Served) {
        c.machine.handle(input, now: loop.clock.now())
        while let action = c.machine.pollOutput() {
            switch action {
            case .send(let bytes):
                c.tcp.send(bytes)
            case .close:
                c.tcp.closeAfterFlush()
            case .dispatch(let request):
                counters.requests += 1
                dispatch(request, on: c.id)
            }
        }
        reschedule(c)
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

    private func dispatch(_ request: HTTPRequest, on id: UInt64) {
        let api = self.api
        let log = self.log
        Task(executorPreference: loop) { [self] in
            let watch = Stopwatch()
            let outcome = await api.handle(request)
            if case .response(let r) = outcome {
                log.debug("\(request.method) \(request.path) \(r.status)",
                          ["ms": String(format: "%.3f", watch.elapsed.milliseconds), "bytes": "\(r.body.count)"])
            }
            loop.execute { [self] in self.finish(outcome, on: id) }
        }
    }

    private func finish(_ outcome: StoreAPI.Outcome, on id: UInt64) {
        guard let c = connections[id] else { return }
        switch outcome {
        case .response(let response):
            feed(.respond(response), to: c)
        case .eventStream(let user, let device):
            openStream(c, user: user, device: device)
        }
    }

    private func openStream(_ c: Served, user: String, device: String) {
        counters.streams += 1
        log.info("push stream opened", ["user": user, "device": device])
        // Listen before answering, so nothing delivered after the client sees "ready" is missed.
        let stream = api.store.push.listen(user: user, deviceID: device)
        let headers = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        feed(.startStream(status: 200, headers: headers), to: c)
        if let t = c.timer { loop.cancel(t); c.timer = nil }
        let id = c.id
        // The API registered the device before answering (StoreAPI.handle).
        c.streamTask = Task(executorPreference: loop) { [self] in
            loop.execute { [self] in self.sendEvent(Array(": ready\n\n".utf8), to: id) }
            for await note in stream {
                let json = WireFormat.serialize(WireFormat.encode(note))
                var event = Array("event: notification\ndata: ".utf8)
                event.append(contentsOf: json)
                event.append(contentsOf: Array("\n\n".utf8))
                let bytes = event
                loop.execute { [self] in self.sendEvent(bytes, to: id) }
            }
        }
        scheduleHeartbeat(c)
    }

    private func sendEvent(_ bytes: [UInt8], to id: UInt64) {
        guard let c = connections[id] else { return }
        feed(.streamChunk(bytes), to: c)
    }

    private func scheduleHeartbeat(_ c: Served) {
        c.heartbeat = loop.schedule(at: loop.clock.now() + options.heartbeat) { [weak self, weak c] in
            guard let self, let c, !c.tcp.isClosed else { return }
            self.feed(.streamChunk(Array(": keepalive\n\n".utf8)), to: c)
            self.scheduleHeartbeat(c)
        }
    }
}
