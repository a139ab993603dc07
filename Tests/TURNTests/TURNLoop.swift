// Our TURN clients and our TURN server engine back to back in memory on a manual clock: every
// datagram is delivered in order after a fixed latency, or dropped by a filter the test sets.
// Peers outside the server are plain endpoints whose datagrams the test injects and collects.
// Nothing sleeps: `run` jumps the clock to the next arrival or deadline.

import STUN
import ZoneCore
@testable import TURN

final class TURNLoop {
    let clock = ManualClock(start: .seconds(1_800_000_000))
    let serverAddress = try! Endpoint(parsing: "127.0.0.1:3478")
    var server: TURNServer
    var clients: [TURNClient] = []
    var clientAddresses: [Endpoint] = []
    var events: [[TURNClient.Event]] = []
    /// Datagrams the relay sent to peers that are not our clients' relayed addresses.
    var peerInbox: [(bytes: [UInt8], from: Endpoint, to: Endpoint)] = []
    /// Every datagram a client sent, decoded when STUN: (client index, method, class).
    var sent: [(client: Int, bytes: [UInt8])] = []
    /// Returns true to drop a datagram from client `i` to the server.
    var dropToServer: (Int, [UInt8]) -> Bool = { _, _ in false }
    /// Returns true to drop a datagram from the server to a client.
    var dropToClient: ([UInt8]) -> Bool = { _ in false }
    var latency: Duration = .milliseconds(10)
    private var inFlight: [(at: Instant, seq: Int, deliver: () -> Void)] = []
    private var seq = 0

    var now: Instant { clock.now() }

    static func serverConfiguration(users: [String: String] = ["alice": "secret", "bob": "hunter2"])
        -> TURNServerConfiguration {
        var c = TURNServerConfiguration(realm: "zone", authentication: .users(users), relayAddress: .loopbackV4,
                                        nonceKey: [7, 7, 7])
        c.relayPorts = 50000...50099
        c.peerPolicy.allowLoopback = true
        return c
    }

    init(server configuration: TURNServerConfiguration = TURNLoop.serverConfiguration()) {
        server = TURNServer(configuration: configuration, seed: 11)
    }

    /// Adds a client on `127.0.0.1:40000+i` and lets it send its first Allocate.
    @discardableResult
    func addClient(username: String = "alice", password: String = "secret",
                   configure: (inout TURNClientConfiguration) -> Void = { _ in }) -> Int {
        let index = clients.count
        var c = TURNClientConfiguration(server: serverAddress, username: username, password: password,
                                        seed: 100 + UInt64(index))
        configure(&c)
        clients.append(TURNClient(configuration: c, now: now))
        clientAddresses.append(Endpoint(address: .loopbackV4, port: 40000 + UInt16(index)))
        events.append([])
        return index
    }

    /// A peer outside the server sends `bytes` to a relayed address.
    func peerSends(_ bytes: [UInt8], from peer: Endpoint, to relay: Endpoint) {
        later { [self] in handleServer(server.outputs(after: .peerDatagram(bytes, from: peer, relay: relay), now: now)) }
    }

    /// Drains every client's outputs onto the network.
    func drain() {
        for i in clients.indices {
            while let output = clients[i].pollOutput() {
                switch output {
                case .transmit(let bytes, let to):
                    sent.append((i, bytes))
                    guard to == serverAddress, !dropToServer(i, bytes) else { continue }
                    let from = clientAddresses[i]
                    later { [self] in
                        handleServer(server.outputs(after: .clientDatagram(bytes, from: from, to: serverAddress), now: now))
                    }
                case .event(let event):
                    events[i].append(event)
                }
            }
        }
    }

    private func later(_ deliver: @escaping () -> Void) {
        seq += 1
        inFlight.append((now + latency, seq, deliver))
    }

    private func handleServer(_ actions: [TURNServer.Action]) {
        for action in actions {
            switch action {
            case .toClient(let bytes, let client, let via):
                toClient(bytes, client: client, via: via)
            case .openRelay(_, let response, let client, let via):
                toClient(response, client: client, via: via)
            case .toPeer(let bytes, let relay, let peer):
                if clients.contains(where: { $0.relayedAddress == peer }) {
                    // Client to client through the same server: the datagram re-enters on `peer`.
                    later { [self] in handleServer(server.outputs(after: .peerDatagram(bytes, from: relay, relay: peer), now: now)) }
                } else {
                    peerInbox.append((bytes, relay, peer))
                }
            case .closeRelay, .event:
                break
            }
        }
    }

    private func toClient(_ bytes: [UInt8], client: Endpoint, via: Endpoint) {
        guard let i = clientAddresses.firstIndex(of: client), !dropToClient(bytes) else { return }
        later { [self] in clients[i].handle(.datagram(bytes, from: via), now: now) }
    }

    /// Runs until `condition` holds or `timeout` of virtual time passes; true when it held.
    @discardableResult
    func run(for timeout: Duration = .seconds(60), until condition: (TURNLoop) -> Bool = { _ in false }) -> Bool {
        let end = now + timeout
        var steps = 0
        while true {
            drain()
            if condition(self) { return true }
            steps += 1
            precondition(steps < 1_000_000, "the TURN loop made no progress")
            var next: Instant? = inFlight.map(\.at).min()
            for client in clients {
                if let d = client.nextDeadline, next == nil || d < next! { next = d }
            }
            if let d = server.nextDeadline, next == nil || d < next! { next = d }
            guard let target = next, target <= end else {
                clock.set(to: end)
                tick()
                drain()
                return condition(self)
            }
            if target > now { clock.set(to: target) }
            inFlight.sort { ($0.at, $0.seq) < ($1.at, $1.seq) }
            while let first = inFlight.first, first.at <= now {
                inFlight.removeFirst()
                first.deliver()
            }
            tick()
        }
    }

    private func tick() {
        for i in clients.indices {
            if let d = clients[i].nextDeadline, d <= now { clients[i].handle(.timer, now: now) }
        }
        if let d = server.nextDeadline, d <= now { handleServer(server.outputs(after: .timer, now: now)) }
    }

    /// STUN requests client `i` sent, as (method, signed).
    func requests(_ i: Int) -> [(method: STUNMethod, signed: Bool)] {
        sent.filter { $0.client == i }.compactMap { entry in
            guard let m = try? STUNMessage(decoding: entry.bytes), m.messageClass == .request else { return nil }
            return (m.method, m.contains(.messageIntegrity))
        }
    }

    /// The relayed address of client `i`, once allocated.
    func relayed(_ i: Int) -> Endpoint? { clients[i].relayedAddress }

    /// Payloads client `i` received, with their peers.
    func received(_ i: Int) -> [(bytes: [UInt8], from: Endpoint)] {
        events[i].compactMap { if case .data(let b, let f) = $0 { (b, f) } else { nil } }
    }
}
