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
        /// Send runs of equal-sized datagrams to one destination as one UDP_SEGMENT message
        /// (Linux 4.18+); turned off by itself if the kernel refuses.
        public var segmentOffload = true
        /// After a read that found more than one datagram waiting, rest this long before the loop
        /// reads again, so the next batch is fuller (`BatchWait`); zero reads again at once.
        /// Adds at most this much delay, and only while the relay is busy.
        public var batchWait: Duration = Options.defaultBatchWait
        public static let defaultBatchWait: Duration = .microseconds(100)
        public static let maxBatchWait = EventLoop.maxPauseBeforeWait
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
        workers.map { $0.snapshot().engine }.reduce(into: TURNServer.Counters()) { total, c in
            total.requests += c.requests; total.bindings += c.bindings; total.allocations += c.allocations
            total.activeAllocations += c.activeAllocations; total.errors += c.errors
            total.authFailures += c.authFailures; total.challenges += c.challenges
            total.packetsToPeers += c.packetsToPeers
            total.packetsToClients += c.packetsToClients; total.bytesToPeers += c.bytesToPeers
            total.bytesToClients += c.bytesToClients; total.dropped += c.dropped; total.malformed += c.malformed
        }
    }

    /// System-call batching of the data path, summed over the threads.
    public var batchCounters: BatchCounters {
        workers.reduce(into: BatchCounters()) { total, w in total.add(w.snapshot().batches) }
    }

    /// One thread: a loop, a listening socket, an engine, relayed sockets.
    ///
    /// The data path reads a batch with recvmmsg into one `ReceiveBatch`, asks the engine where
    /// each datagram goes (`routeClientDatagram`, `routePeerDatagram`: no allocation), and sends
    /// the payloads from where they landed with one sendmmsg per socket (`SendBatch`, segmented
    /// runs where the kernel can). Everything else goes through the engine's actions.
    final class Worker: @unchecked Sendable {
        let loop: EventLoop
        let listener: UDPSocket
        private var engine: TURNServer
        /// Relayed sockets and addresses by the engine's relay handle (its allocation slot).
        private var relaySockets: [UDPSocket?] = []
        private var relayAddresses: [Endpoint?] = []
        private var handleByRelay: [Endpoint: Int] = [:]
        private var timer: EventLoop.Timer?
        private var timerAt: Instant?
        private let published = Mutex((engine: TURNServer.Counters(), batches: BatchCounters()))
        private var batches = BatchCounters()
        private let log = Logger(component: "relay")
        private var outbound: [(payload: [UInt8], to: Endpoint)] = []
        private let received = ReceiveBatch()
        private let toClients: SendBatch
        private let toPeers: SendBatch
        /// Client datagrams of the current batch bound for peers.
        private var pending = PeerBoundBatch(capacity: 64)
        private var offloadLogged = false
        private let offloadWanted: Bool
        private var batchWait: BatchWait

        init(index: Int, options: Options, reusePort: Bool) throws {
            loop = try EventLoop(name: "zonertc-relay-\(index)")
            listener = try UDPSocket(bind: options.listen, reusePort: reusePort, batch: 1)
            var seed = SystemRandomNumberGenerator()
            engine = TURNServer(configuration: options.server, seed: seed.next())
            offloadWanted = options.segmentOffload
            batchWait = BatchWait(pause: options.batchWait)
            toClients = SendBatch(segmentOffload: options.segmentOffload)
            toPeers = SendBatch(segmentOffload: options.segmentOffload)
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
                engine.handle(.stop, now: loop.clock.now())
                performOutputs()
                published.withLock { $0 = (engine.counters, batches) }
                flush()
                loop.deregister(listener.fd)
                done.signal()
            }
            done.wait()
            loop.stop()
        }

        func snapshot() -> (engine: TURNServer.Counters, batches: BatchCounters) { published.withLock { $0 } }

        // MARK: Data path

        private func readClients() {
            let local = listener.localEndpoint
            var read = 0
            while true {
                let n = received.receive(from: listener.fd)
                batches.receiveCalls += 1
                batches.datagramsReceived += n
                read += n
                guard n > 0 else { break }
                let now = loop.clock.now()
                for i in 0..<n {
                    guard let from = received.source(i) else { continue }
                    let bytes = received.payload(i)
                    switch engine.routeClientDatagram(bytes, from: from, to: local, now: now) {
                    case .toPeer(let handle, let peer, let length):
                        pending.append(.init(handle: handle.index, start: bytes.baseAddress! + 4, length: length,
                                             peer: peer))
                    case .dropped:
                        break
                    case .notChannelData:
                        // Keep order: what was queued for peers leaves before this request's effects.
                        sendPending()
                        engine.handle(.clientDatagram(Array(bytes), from: from, to: local), now: now)
                        performOutputs()
                    }
                }
                sendPending()
                if n < received.count { break }
            }
            afterBatch(read: read)
        }

        /// Sends the queued client datagrams, one sendmmsg per relayed socket, grouped by peer.
        private func sendPending() {
            guard !pending.isEmpty else { return }
            pending.drain({ toPeers.append($0.start, length: $0.length, to: $0.peer) }, endOfSocket: { handle in
                guard let socket = handle < relaySockets.count ? relaySockets[handle] : nil else {
                    batches.datagramsNotSent += toPeers.datagrams
                    toPeers.send(on: -1)
                    return
                }
                send(toPeers, on: socket.fd)
            })
            noteOffload(toPeers)
        }

        /// Sends `batch` on `fd`, counting the call, its messages and datagrams.
        private func send(_ batch: SendBatch, on fd: Int32) {
            guard !batch.isEmpty else { return }
            batches.sendCalls += 1
            batches.messagesSent += batch.messageCount
            batches.datagramsSent += batch.datagrams
            batches.datagramsNotSent += batch.send(on: fd)
        }

        private func readPeers(_ handle: Int) {
            guard let socket = relaySockets[handle] else { return }
            let relayHandle = RelayHandle(index: handle)
            var read = 0
            while true {
                let n = received.receive(from: socket.fd)
                batches.receiveCalls += 1
                batches.datagramsReceived += n
                read += n
                guard n > 0 else { break }
                let now = loop.clock.now()
                for i in 0..<n {
                    guard let from = received.source(i) else { continue }
                    let length = received.length(i)
                    switch engine.routePeerDatagram(length: length, from: from, handle: relayHandle, now: now) {
                    case .channel(let number, let client, _):
                        let frame = received.channelDataFrame(i, channel: number)
                        toClients.append(frame.start, length: frame.length, to: client)
                        if toClients.isFull { send(toClients, on: listener.fd) }
                    case .dataIndication:
                        send(toClients, on: listener.fd)
                        guard let relay = relayAddresses[handle] else { continue }
                        engine.handle(.peerDatagram(Array(received.payload(i)), from: from, relay: relay), now: now)
                        performOutputs()
                        flush()
                    case .dropped:
                        break
                    }
                }
                send(toClients, on: listener.fd)
                noteOffload(toClients)
                if n < received.count { break }
            }
            afterBatch(read: read)
        }

        private func noteOffload(_ batch: SendBatch) {
            if !batch.segmentOffload && !offloadLogged && offloadWanted {
                offloadLogged = true
                log.notice("the kernel refused UDP segmentation offload; sending datagram by datagram")
            }
        }

        /// Publishes counters, sends what the batch produced for clients in one sendmmsg, re-arms the
        /// timer; after a read of `read` datagrams, asks the loop to rest first if the relay is busy.
        private func afterBatch(read: Int = 0) {
            if read > 0, let pause = batchWait.pause(afterReading: read, lastRestGathered: loop.takePauseOutcome()) {
                loop.pauseBeforeNextWait(pause)
            }
            batches.pauses = loop.pausesTaken
            // Counters first: a client that sees the answer must also see what it did.
            published.withLock { $0 = (engine.counters, batches) }
            flush()
            guard let next = engine.nextDeadline else { return }
            if let at = timerAt, at <= next, timer != nil { return }
            if let t = timer { loop.cancel(t) }
            timerAt = next
            timer = loop.schedule(at: next) { [weak self] in
                guard let self else { return }
                self.timer = nil
                self.timerAt = nil
                self.engine.handle(.timer, now: self.loop.clock.now())
                self.performOutputs()
                self.afterBatch()
            }
        }

        private func flush() {
            guard !outbound.isEmpty else { return }
            listener.send(outbound)
            outbound.removeAll(keepingCapacity: true)
        }

        // MARK: Control path

        /// Carries out everything the engine has queued, in order.
        private func performOutputs() {
            while let action = engine.pollOutput() {
                switch action {
                case .toClient(let bytes, let client, _):
                    outbound.append((bytes, client))
                    if outbound.count >= 64 { flush() }
                case .toPeer(let bytes, let relay, let peer):
                    if let handle = handleByRelay[relay] { relaySockets[handle]?.send(bytes, to: peer) }
                case .openRelay(let relay, let response, let client, _):
                    do {
                        guard let handle = engine.relayHandle(for: relay)?.index else { continue }
                        let socket = try UDPSocket(bind: relay, batch: 1)
                        try loop.register(socket.fd, interest: .readable) { [weak self] _ in self?.readPeers(handle) }
                        while relaySockets.count <= handle {
                            relaySockets.append(nil)
                            relayAddresses.append(nil)
                        }
                        relaySockets[handle] = socket
                        relayAddresses[handle] = relay
                        handleByRelay[relay] = handle
                        outbound.append((response, client))
                    } catch {
                        log.notice("cannot bind relayed address", ["relay": "\(relay)", "error": "\(error)"])
                        engine.handle(.relayBindFailed(relay), now: loop.clock.now())
                    }
                case .closeRelay(let relay):
                    guard let handle = handleByRelay.removeValue(forKey: relay) else { continue }
                    if let socket = relaySockets[handle] { loop.deregister(socket.fd) }
                    relaySockets[handle] = nil
                    relayAddresses[handle] = nil
                case .event(let event):
                    switch event {
                    case .allocated(let user, let client, let relay, let lifetime):
                        log.info("allocation", ["user": user, "client": "\(client)", "relay": "\(relay)",
                                                "lifetime": "\(lifetime)"])
                    case .released(let user, let relay, let reason):
                        log.info("allocation released", ["user": user, "relay": "\(relay)", "reason": reason])
                    case .refused(let client, let code, let reason):
                        log.debug("refused", ["client": "\(client)", "code": "\(code)", "reason": reason])
                    case .binding(let client):
                        log.debug("binding", ["client": "\(client)"])
                    case .relayMoved(let user, let from, let to):
                        log.info("allocation moved to another relayed port", ["user": user, "from": "\(from)",
                                                                               "relay": "\(to)"])
                    }
                }
            }
        }
    }
}
