import Foundation
import Net
import PeerNet
import RecordStore
import Signaling
import StoreServer
import ZoneCore

/// The calls `zonertc bench load` plays: each is two peers (two users, one device each) in a room of
/// their own, running the real signaling machine (`CallSignaling`) over `RemoteStoreClient` with a
/// push stream each, as `zonertc peer` does, but without media and with `LoadICE` instead of sockets.
/// A call's record traffic is a real call's: the room set up, offer, answer, candidates, the session
/// record, the goodbye and garbage collection.
///
/// Every machine is stepped on `loop`; store requests run as tasks preferring it, several per peer
/// at once (`StoreRequestQueue`, as the peer's driver runs them), and push notifications are fed in
/// as they arrive. Convergence is from the moment both peers start the call (their rooms are set up
/// and their push streams open before) until both negotiators report the same epoch connected.
final class LoadCalls: @unchecked Sendable {
    struct Settings: Sendable {
        /// Daemons; a call's owner uses the call's daemon and its guest the next, so with two daemons
        /// every call's records cross from one to the other.
        var endpoints: [Endpoint]
        /// Makes user names unique per run (PostgreSQL keeps users).
        var runID: String
        var signaling: SignalingConfiguration
        /// A call not converged this long after its start has failed.
        var timeout: Duration
    }

    /// One peer of a call. Loop-confined (handed between tasks, touched only on the loop).
    final class Peer: @unchecked Sendable {
        let name: String
        let client: RemoteStoreClient
        let binding: RoomBinding
        var signaling: CallSignaling
        var queue = StoreRequestQueue<CallSignaling.Origin>(limit: 4)
        var ice: LoadICE
        var stream: AsyncStream<PushNotification>?
        var pushTask: Task<Void, Never>?
        var timer: EventLoop.Timer?
        var timerAt: Instant?
        var state: CallState = .idle

        init(name: String, client: RemoteStoreClient, binding: RoomBinding, signaling: CallSignaling, octet: UInt8) {
            self.name = name
            self.client = client
            self.binding = binding
            self.signaling = signaling
            ice = LoadICE(octet: octet)
        }

        var finished: Bool { state == .ended && queue.isIdle }
    }

    /// One call. Loop-confined (handed between tasks, touched only on the loop).
    final class Call: @unchecked Sendable {
        let index: Int
        let owner: Peer
        let guest: Peer
        var startedAt: Instant?
        var convergedMs: Double?
        var failure: String?
        var hungUp = false
        /// Hang up as soon as the call converged (a lone call), rather than when its hold ends.
        var hangUpOnConvergence = false
        var done = false
        /// Called once, on the loop, when the call is over (hung up and its goodbye done, or failed).
        var onDone: () -> Void = {}

        init(index: Int, owner: Peer, guest: Peer) {
            self.index = index
            self.owner = owner
            self.guest = guest
        }

        func other(_ peer: Peer) -> Peer { peer === owner ? guest : owner }
    }

    /// What the calls counted so far.
    struct Tally: Sendable {
        var prepared = 0
        var preparationFailed = 0
        var started = 0
        var converged = 0
        var failed = 0
        var ended = 0
        /// Calls between their start and their end now, and the most there ever were.
        var live = 0
        var peakLive = 0
        var storeRequests = 0
        /// Store requests that failed, by error code (the machines retry what they may).
        var storeErrors: [String: Int] = [:]
        /// Records the remote wrote that a peer dropped (there should be none).
        var rejectedRecords = 0
    }

    let loop: EventLoop
    let settings: Settings
    private(set) var tally = Tally()
    /// Convergence of each call that converged, in milliseconds, in the order they converged.
    private(set) var convergenceMs: [Double] = []
    private(set) var failures: [String] = []

    init(settings: Settings) throws {
        self.settings = settings
        loop = try EventLoop(name: "zonertc-bench-calls")
        loop.start()
    }

    /// Runs `work` on the loop and returns what it returns.
    func onLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: work()) } }
    }

    // MARK: Preparing (not timed)

    /// Registers call `index`'s two users, sets up their room and opens both push streams; nil (and
    /// counted) when any step fails.
    func prepare(_ index: Int) async -> Call? {
        do {
            let call = try await makeCall(index)
            await onLoop { self.tally.prepared += 1 }
            return call
        } catch {
            let reason = "call \(index): setting up failed: \(error)"
            await onLoop {
                self.tally.preparationFailed += 1
                if self.failures.count < 20 { self.failures.append(reason) }
            }
            return nil
        }
    }

    private func makeCall(_ index: Int) async throws -> Call {
        // Each room is its owner's zone, and every call has an owner of its own: the index is enough.
        let suffix = String(index, radix: 36)
        let roomID = try RoomID(RoomID.prefix + String(repeating: "0", count: max(0, 8 - suffix.count)) + suffix)
        let names = ["call-\(settings.runID)-\(index)-a", "call-\(settings.runID)-\(index)-b"]
        var clients: [RemoteStoreClient] = []
        for (i, name) in names.enumerated() {
            let endpoint = settings.endpoints[(index + i) % settings.endpoints.count]
            let token = try await RemoteStoreClient.register(userName: name, at: endpoint)
            var configuration = RemoteStoreClient.Configuration(endpoint: endpoint, token: token)
            configuration.requestTimeout = .seconds(10)
            clients.append(RemoteStoreClient(configuration: configuration, userRecordName: name, deviceID: "phone"))
        }
        // The owner makes the room before the guest accepts its share.
        let roles: [RoomRole] = [.owner, .participant(ownerUserID: names[0])]
        var peers: [Peer] = []
        for i in 0..<2 {
            let setup = RoomSetup(roomID: roomID, role: roles[i], myUserID: names[i], displayName: names[i],
                                  roomName: roomID.rawValue)
            let binding = try await clients[i].setUp(setup).get()
            let signaling = try CallSignaling(configuration: settings.signaling, binding: binding, myUserID: names[i],
                                              remoteUserID: names[1 - i], seed: UInt64(index * 2 + i + 1))
            let peer = Peer(name: names[i], client: clients[i], binding: binding, signaling: signaling,
                            octet: UInt8(i + 1))
            // Open before the call starts, so no record saved after its first fetch goes unannounced.
            peer.stream = try await clients[i].notifications()
            peers.append(peer)
        }
        return Call(index: index, owner: peers[0], guest: peers[1])
    }

    // MARK: Running (on the loop)

    /// Starts `call`: both peers begin at once; it hangs up `hold` later (nil: once it converged), or
    /// fails at `timeout`.
    func start(_ call: Call, hold: Duration?) {
        let now = loop.clock.now()
        call.startedAt = now
        tally.started += 1
        tally.live += 1
        tally.peakLive = max(tally.peakLive, tally.live)
        for peer in [call.owner, call.guest] {
            if let stream = peer.stream {
                peer.pushTask = Task(executorPreference: loop) { [self] in
                    for await note in stream {
                        guard !call.done else { return }
                        handle(.notification(note), on: peer, of: call)
                    }
                }
            }
            handle(.start, on: peer, of: call)
        }
        loop.schedule(at: now + settings.timeout) { [self] in
            if call.convergedMs == nil, !call.done { fail(call, "not converged within \(settings.timeout)") }
        }
        if let hold {
            loop.schedule(at: now + hold) { [self] in hangUp(call) }
        } else {
            call.hangUpOnConvergence = true
        }
    }

    private func hangUp(_ call: Call) {
        guard !call.done, !call.hungUp else { return }
        call.hungUp = true
        for peer in [call.owner, call.guest] { handle(.hangUp, on: peer, of: call) }
        // The goodbye is store requests; a store that stopped answering must not hold the run.
        loop.schedule(at: loop.clock.now() + .seconds(10)) { [self] in
            if !call.done { fail(call, "the goodbye did not finish within 10 s") }
        }
    }

    private func handle(_ event: CallSignaling.Event, on peer: Peer, of call: Call) {
        guard !call.done else { return }
        var events = OutputQueue<CallSignaling.Event>(capacity: 4)
        events.append(event)
        while let next = events.pop() {
            peer.signaling.handle(next, now: loop.clock.now())
            while let action = peer.signaling.pollOutput() {
                switch action {
                case .store(let request, let origin):
                    peer.queue.enqueue(request, tag: origin)
                case .ice(let command):
                    for result in peer.ice.perform(command) { events.append(.ice(result)) }
                case .report(let state):
                    peer.state = state
                case .zoneUnavailable(let path, let error):
                    return fail(call, "\(peer.name): the room became unavailable (\(path)): \(error.message)")
                case .rejected:
                    tally.rejectedRecords += 1
                case .remoteHungUp:
                    break
                }
            }
        }
        startRequests(peer, of: call)
        checkConnectivity(call)
        reschedule(peer, of: call)
        settle(call)
    }

    private func startRequests(_ peer: Peer, of call: Call) {
        while let (ticket, request, origin) = peer.queue.start() {
            tally.storeRequests += 1
            Task(executorPreference: loop) { [self] in
                let outcome = await peer.client.perform(request)
                peer.queue.finish(ticket)
                if case .failed(let error) = outcome { tally.storeErrors[error.code.serverErrorCode, default: 0] += 1 }
                guard !call.done else { return }
                handle(.reply(origin, outcome), on: peer, of: call)
            }
        }
    }

    /// Both agents' checks, after either peer moved.
    private func checkConnectivity(_ call: Call) {
        for peer in [call.owner, call.guest] {
            if let event = peer.ice.check(with: call.other(peer).ice) { handle(.ice(event), on: peer, of: call) }
        }
    }

    private func reschedule(_ peer: Peer, of call: Call) {
        let next = peer.signaling.nextDeadline
        guard next != peer.timerAt else { return }
        if let timer = peer.timer { loop.cancel(timer) }
        peer.timerAt = next
        peer.timer = next.map { due in
            loop.schedule(at: due) { [self] in
                peer.timer = nil
                peer.timerAt = nil
                handle(.timer, on: peer, of: call)
            }
        }
    }

    /// Notes convergence, and the end once both peers said goodbye.
    private func settle(_ call: Call) {
        guard !call.done, let started = call.startedAt else { return }
        if call.convergedMs == nil, case .connected(let a) = call.owner.state, case .connected(let b) = call.guest.state,
           a == b {
            let ms = (loop.clock.now() - started).milliseconds
            call.convergedMs = ms
            convergenceMs.append(ms)
            tally.converged += 1
            if call.hangUpOnConvergence { return hangUp(call) }
        }
        if call.hungUp, call.owner.finished, call.guest.finished { end(call) }
    }

    private func fail(_ call: Call, _ reason: String) {
        guard !call.done else { return }
        call.failure = reason
        tally.failed += 1
        if failures.count < 20 { failures.append("call \(call.index): \(reason)") }
        end(call)
    }

    private func end(_ call: Call) {
        guard !call.done else { return }
        call.done = true
        tally.live -= 1
        if call.failure == nil && call.convergedMs != nil { tally.ended += 1 }
        for peer in [call.owner, call.guest] {
            peer.pushTask?.cancel()
            peer.stream = nil
            if let timer = peer.timer { loop.cancel(timer) }
        }
        call.onDone()
    }
}
