// Our TURN clients and our TURN server engine back to back on the shared `TestNetwork`: every
// datagram is delivered in order after a fixed latency, or dropped by a filter the test sets.
// Peers outside the server are plain endpoints whose datagrams the test injects and collects.
// Nothing sleeps: `run` jumps the clock to the next arrival or deadline.

import STUN
import TestNetwork
import ZoneCore
@testable import TURN

final class TURNLoop {
    /// Every datagram crosses loopback in `latency`.
    static let latency: Duration = .milliseconds(10)
    let net = TestNetwork(start: .seconds(1_800_000_000), seed: 1, link: TestNetwork.link(path: TURNLoop.latency))
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

    var now: Instant { net.now }

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

    /// Adds a client on `127.0.0.1:40000+i` (or on `address`, which another client may share, as a
    /// new ICE epoch's does its predecessor's socket) and lets it send its first Allocate.
    @discardableResult
    func addClient(username: String = "alice", password: String = "secret", address: Endpoint? = nil,
                   configure: (inout TURNClientConfiguration) -> Void = { _ in }) -> Int {
        let index = clients.count
        var c = TURNClientConfiguration(server: serverAddress, username: username, password: password,
                                        seed: 100 + UInt64(index))
        configure(&c)
        clients.append(TURNClient(configuration: c, now: now))
        clientAddresses.append(address ?? Endpoint(address: .loopbackV4, port: 40000 + UInt16(index)))
        events.append([])
        return index
    }

    /// A peer outside the server sends `bytes` to a relayed address.
    func peerSends(_ bytes: [UInt8], from peer: Endpoint, to relay: Endpoint) {
        net.send(bytes, from: peer, to: relay)
    }

    /// Drains every client's outputs onto the network.
    func drain() {
        for i in clients.indices {
            while let output = clients[i].pollOutput() {
                switch output {
                case .transmit(let bytes, let to):
                    sent.append((i, bytes))
                    guard to == serverAddress, !dropToServer(i, bytes) else { continue }
                    net.send(bytes, from: clientAddresses[i], to: serverAddress)
                case .event(let event):
                    events[i].append(event)
                }
            }
        }
    }

    /// A datagram reached the server's listening address, a relayed address, or a client.
    private func deliver(_ arrival: Arrival) {
        if arrival.to == serverAddress {
            server.handle(.clientDatagram(arrival.payload, from: arrival.from, to: arrival.to), now: now)
        } else if clientAddresses.contains(arrival.to) {
            // On a shared socket, the client whose request it answers; else the newest there.
            let sharing = clientAddresses.indices.filter { clientAddresses[$0] == arrival.to }
            let i = sharing.first { clients[$0].awaitsResponse(arrival.payload) } ?? sharing.last!
            clients[i].handle(.datagram(arrival.payload, from: arrival.from), now: now)
        } else {
            server.handle(.peerDatagram(arrival.payload, from: arrival.from, relay: arrival.to), now: now)
        }
        drainServer()
    }

    private func drainServer() {
        while let action = server.pollOutput() {
            switch action {
            case .toClient(let bytes, let client, let via):
                toClient(bytes, client: client, via: via)
            case .openRelay(_, let response, let client, let via):
                toClient(response, client: client, via: via)
            case .toPeer(let bytes, let relay, let peer):
                if clients.contains(where: { $0.relayedAddress == peer }) {
                    // Client to client through the same server: the datagram re-enters on `peer`.
                    net.send(bytes, from: relay, to: peer)
                } else {
                    peerInbox.append((bytes, relay, peer))
                }
            case .closeRelay, .event:
                break
            }
        }
    }

    private func toClient(_ bytes: [UInt8], client: Endpoint, via: Endpoint) {
        guard clientAddresses.contains(client), !dropToClient(bytes) else { return }
        net.send(bytes, from: via, to: client)
    }

    /// Runs until `condition` holds or `timeout` of virtual time passes; true when it held.
    @discardableResult
    func run(for timeout: Duration = .seconds(60), until condition: (TURNLoop) -> Bool = { _ in false }) -> Bool {
        net.run(for: timeout, drain: drain,
                deadline: { (clients.map(\.nextDeadline) + [server.nextDeadline]).compactMap { $0 }.min() },
                deliver: deliver, tick: tick, until: { condition(self) })
    }

    private func tick() {
        for i in clients.indices {
            if let d = clients[i].nextDeadline, d <= now { clients[i].handle(.timer, now: now) }
        }
        if let d = server.nextDeadline, d <= now {
            server.handle(.timer, now: now)
            drainServer()
        }
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
