// Two ICETransports and our TURN server engine on the shared `TestNetwork`: datagrams arrive
// after a fixed latency, in order; the TURN server's relayed addresses are endpoints of the
// network like the transports' host sockets. Nothing sleeps: `run` jumps the clock to the next
// arrival or deadline.

import ICE
import Peer
import TURN
import TestNetwork
import ZoneCore

final class RelayNetwork {
    /// Every datagram crosses loopback in `latency`.
    static let latency: Duration = .milliseconds(5)
    let net = TestNetwork(start: .seconds(1_800_000_000), seed: 1, link: TestNetwork.link(path: RelayNetwork.latency))
    static let serverAddress = try! Endpoint(parsing: "127.0.0.1:3478")
    static let hosts = [try! Endpoint(parsing: "127.0.0.1:40001"), try! Endpoint(parsing: "127.0.0.1:40002")]
    static let credentials = [Credentials(ufrag: "left", password: "left-password-0123456789"),
                              Credentials(ufrag: "right", password: "right-password-012345678")]
    var server: TURNServer
    var transports: [ICETransport] = []
    var events: [[ICETransport.Event]] = [[], []]
    var openRelays: Set<Endpoint> = []
    /// Every datagram that left a transport's socket: (sender, from, to).
    var wire: [(sender: Int, from: Endpoint, to: Endpoint)] = []
    /// Host-to-host datagrams are dropped when set (a path only the relay crosses).
    var blockDirect = false

    var now: Instant { net.now }

    init(relayOnly: (Bool, Bool), turn: (Bool, Bool) = (true, true), password: String = "secret") throws {
        var c = TURNServerConfiguration(realm: "zone", authentication: .users(["alice": "secret"]),
                                        relayAddress: .loopbackV4, nonceKey: [1, 2, 3])
        c.relayPorts = 50000...50099
        c.peerPolicy.allowLoopback = true
        server = TURNServer(configuration: c, seed: 5)
        let turnServer = TURNServerCredentials(server: RelayNetwork.serverAddress, username: "alice",
                                               password: password)
        for i in 0..<2 {
            let agent = AgentConfiguration(hostAddresses: [RelayNetwork.hosts[i]],
                                           role: i == 0 ? .controlling : .controlled,
                                           credentials: RelayNetwork.credentials[i], seed: 40 + UInt64(i))
            let configuration = ICETransport.Configuration(
                agent: agent, turnServers: (i == 0 ? turn.0 : turn.1) ? [turnServer] : [],
                relayOnly: i == 0 ? relayOnly.0 : relayOnly.1)
            transports.append(try ICETransport(configuration: configuration, now: now))
        }
        try transports[0].setRemoteCredentials(RelayNetwork.credentials[1])
        try transports[1].setRemoteCredentials(RelayNetwork.credentials[0])
    }

    /// Drains both transports: transmits go on the network; candidates are trickled to the other.
    func drain() {
        var progressed = true
        while progressed {
            progressed = false
            for i in 0..<2 {
                while let output = transports[i].pollOutput() {
                    progressed = true
                    switch output {
                    case .transmit(let bytes, let from, let to):
                        wire.append((i, from, to))
                        net.send(bytes, from: from, to: to)
                    case .event(let event):
                        events[i].append(event)
                        switch event {
                        case .localCandidate(let c):
                            let remote = Candidate.remote(kind: c.kind, address: c.address, priority: c.priority,
                                                          foundation: c.foundation)
                            transports[1 - i].addRemoteCandidate(remote)
                        case .gatheringComplete:
                            transports[1 - i].endOfRemoteCandidates()
                        default:
                            break
                        }
                    }
                }
            }
        }
    }

    private func deliver(_ arrival: Arrival) {
        let bytes = arrival.payload, from = arrival.from, to = arrival.to
        if to == RelayNetwork.serverAddress {
            server.handle(.clientDatagram(bytes, from: from, to: to), now: now)
            drainServer()
        } else if openRelays.contains(to) {
            server.handle(.peerDatagram(bytes, from: from, relay: to), now: now)
            drainServer()
        } else if let i = RelayNetwork.hosts.firstIndex(of: to) {
            let direct = RelayNetwork.hosts.contains(from)
            guard !(blockDirect && direct) else { return }
            transports[i].handle(.datagram(bytes, from: from, to: to), now: now)
        }
    }

    private func drainServer() {
        while let action = server.pollOutput() {
            switch action {
            case .toClient(let bytes, let client, let via):
                net.send(bytes, from: via, to: client)
            case .openRelay(let relay, let response, let client, let via):
                openRelays.insert(relay)
                net.send(response, from: via, to: client)
            case .toPeer(let bytes, let relay, let peer):
                net.send(bytes, from: relay, to: peer)
            case .closeRelay(let relay):
                openRelays.remove(relay)
            case .event:
                break
            }
        }
    }

    /// Runs until `condition` holds or `timeout` of virtual time passes; true when it held.
    @discardableResult
    func run(for timeout: Duration = .seconds(30), until condition: (RelayNetwork) -> Bool = { _ in false }) -> Bool {
        net.run(for: timeout, drain: drain,
                deadline: { (transports.map(\.nextDeadline) + [server.nextDeadline]).compactMap { $0 }.min() },
                deliver: deliver, tick: tick, until: { condition(self) })
    }

    private func tick() {
        for i in 0..<2 {
            if let d = transports[i].nextDeadline, d <= now { transports[i].handle(.timer, now: now) }
        }
        if let d = server.nextDeadline, d <= now {
            server.handle(.timer, now: now)
            drainServer()
        }
    }

    var bothConnected: Bool { transports.allSatisfy { $0.state == .connected || $0.state == .completed } }

    func received(_ i: Int) -> [[UInt8]] {
        events[i].compactMap { if case .data(let b, _) = $0 { b } else { nil } }
    }

    func announced(_ i: Int) -> [Candidate] {
        events[i].compactMap { if case .localCandidate(let c) = $0 { c } else { nil } }
    }
}
