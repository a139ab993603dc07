import Foundation
import Net
import STUN
import Synchronization
import TURN
import ZoneCore

/// The TURN relay on real sockets: one event loop per thread, each with a listening socket
/// (SO_REUSEPORT spreads clients over them, a client always to the same one), its own engine and
/// the relayed sockets of its allocations. The driver moves datagrams; the engine decides.
public final class RelayDaemon: @unchecked Sendable {
    public struct Options: Sendable {
        public var listen: Endpoint
        public var threads = 1
        public var server: TURNServerConfiguration

        public init(listen: Endpoint, server: TURNServerConfiguration) {
            self.listen = listen
            self.server = server
        }
    }

    public let options: Options
    private var workers: [Worker] = []

    public init(options: Options) throws {
        self.options = options
        for i in 0..<max(1, options.threads) {
            workers.append(try Worker(index: i, options: options, reusePort: options.threads > 1))
        }
    }

    /// The bound listening address (the port chosen when asked for port 0).
    public var endpoint: Endpoint { workers[0].listener.localEndpoint }

    public func start() { for w in workers { w.start() } }

    /// Ends every allocation (closing relayed sockets) and stops the loops.
    public func stop() { for w in workers { w.stop() } }

    /// Counters summed over the threads.
    public var counters: TURNServer.Counters {
        workers.map { $0.snapshot() }.reduce(into: TURNServer.Counters()) { total, c in
            total.requests += c.requests; total.bindings += c.bindings; total.allocations += c.allocations
            total.activeAllocations += c.activeAllocations; total.errors += c.errors
            total.authFailures += c.authFailures; total.challenges += c.challenges; total.packetsToPeers += c.packetsToPeers
            total.packetsToClients += c.packetsToClients; total.bytesToPeers += c.bytesToPeers
            total.bytesToClients += c.bytesToClients; total.dropped += c.dropped; total.malformed += c.malformed
        }
    }

    /// One thread: a loop, a listening socket, an engine, relayed sockets.
    final class Worker: @unchecked Sendable {
        let loop: EventLoop
        let listener: UDPSocket
        private var engine: TURNServer
        private var relays: [Endpoint: UDPSocket] = [:]
        private var timer: EventLoop.Timer?
        private var timerAt: Instant?
        private let published = Mutex(TURNServer.Counters())
        private let log = Logger(component: "relay")
        private var outbound: [(payload: [UInt8], to: Endpoint)] = []

        init(index: Int, options: Options, reusePort: Bool) throws {
            loop = try EventLoop(name: "zonertc-relay-\(index)")
            listener = try UDPSocket(bind: options.listen, reusePort: reusePort, batch: 64)
            var seed = SystemRandomNumberGenerator()
            engine = TURNServer(configuration: options.server, seed: seed.next())
        }

        func start() {
            loop.execute { [self] in
                do {
                    try loop.register(listener.fd, interest: .readable) { [weak self] _ in self?.readClients() }
                } catch {
                    log.error("cannot watch the listening socket", ["error": "\(error)"])
                }
            }
            loop.start()
        }

        func stop() {
            let done = DispatchSemaphore(value: 0)
            loop.execute { [self] in
                perform(engine.releaseAll())
                published.withLock { $0 = engine.counters }
                flush()
                loop.deregister(listener.fd)
                done.signal()
            }
            done.wait()
            loop.stop()
        }

        func snapshot() -> TURNServer.Counters { published.withLock { $0 } }

        private func readClients() {
            let now = loop.clock.now()
            let local = listener.localEndpoint
            listener.receiveAll { bytes, from in
                perform(engine.clientDatagram(Array(bytes), from: from, to: local, now: now))
            }
            afterBatch()
        }

        private func readPeers(_ relay: Endpoint) {
            guard let socket = relays[relay] else { return }
            let now = loop.clock.now()
            socket.receiveAll { bytes, from in
                perform(engine.peerDatagram(Array(bytes), from: from, relay: relay, now: now))
            }
            afterBatch()
        }

        /// Publishes counters, sends what the batch produced for clients in one sendmmsg, re-arms the timer.
        private func afterBatch() {
            // Counters first: a client that sees the answer must also see what it did.
            published.withLock { $0 = engine.counters }
            flush()
            guard let next = engine.nextDeadline else { return }
            if let at = timerAt, at <= next, timer != nil { return }
            if let t = timer { loop.cancel(t) }
            timerAt = next
            timer = loop.schedule(at: next) { [weak self] in
                guard let self else { return }
                self.timer = nil
                self.timerAt = nil
                self.perform(self.engine.timer(now: self.loop.clock.now()))
                self.afterBatch()
            }
        }

        private func flush() {
            guard !outbound.isEmpty else { return }
            listener.send(outbound)
            outbound.removeAll(keepingCapacity: true)
        }

        private func perform(_ actions: [TURNServer.Action]) {
            for action in actions {
                switch action {
                case .toClient(let bytes, let client, _):
                    outbound.append((bytes, client))
                    if outbound.count >= 64 { flush() }
                case .toPeer(let bytes, let relay, let peer):
                    relays[relay]?.send(bytes, to: peer)
                case .openRelay(let relay, let response, let client, _):
                    do {
                        let socket = try UDPSocket(bind: relay, batch: 64)
                        try loop.register(socket.fd, interest: .readable) { [weak self] _ in self?.readPeers(relay) }
                        relays[relay] = socket
                        outbound.append((response, client))
                    } catch {
                        log.warning("cannot bind relayed address", ["relay": "\(relay)", "error": "\(error)"])
                        perform(engine.relayBindFailed(relay: relay, now: loop.clock.now()))
                    }
                case .closeRelay(let relay):
                    if let socket = relays.removeValue(forKey: relay) { loop.deregister(socket.fd) }
                case .event(let event):
                    switch event {
                    case .allocated(let user, let client, let relay, let lifetime):
                        log.info("allocation", ["user": user, "client": "\(client)", "relay": "\(relay)", "lifetime": "\(lifetime)"])
                    case .released(let user, let relay, let reason):
                        log.info("allocation released", ["user": user, "relay": "\(relay)", "reason": reason])
                    case .refused(let client, let code, let reason):
                        log.debug("refused", ["client": "\(client)", "code": "\(code)", "reason": reason])
                    case .binding(let client):
                        log.debug("binding", ["client": "\(client)"])
                    }
                }
            }
        }
    }
}
