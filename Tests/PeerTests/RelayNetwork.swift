// Two ICETransports and our TURN server engine on one in-memory network with a manual clock:
// datagrams arrive after a fixed latency, in order; the TURN server's relayed addresses are
// endpoints of the network like the transports' host sockets. Nothing sleeps: `run` jumps the
// clock to the next arrival or deadline.

import ICE
import Peer
import TURN
import ZoneCore

final class RelayNetwork {
    let clock = ManualClock(start: .seconds(1_800_000_000))
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
    var latency: Duration = .milliseconds(5)
    private var inFlight: [(at: Instant, seq: Int, deliver: () -> Void)] = []
    private var seq = 0

    var now: Instant { clock.now() }

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
                        later { [self] in fromSocket(bytes, from: from, to: to) }
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

    private func later(_ deliver: @escaping () -> Void) {
        seq += 1
        inFlight.append((now + latency, seq, deliver))
    }

    private func fromSocket(_ bytes: [UInt8], from: Endpoint, to: Endpoint) {
        if to == RelayNetwork.serverAddress {
            serverActions(server.outputs(after: .clientDatagram(bytes, from: from, to: to), now: now))
        } else if openRelays.contains(to) {
            serverActions(server.outputs(after: .peerDatagram(bytes, from: from, relay: to), now: now))
        } else if let i = RelayNetwork.hosts.firstIndex(of: to) {
            let direct = RelayNetwork.hosts.contains(from)
            guard !(blockDirect && direct) else { return }
            transports[i].handle(.datagram(bytes, from: from, to: to), now: now)
        }
    }

    private func serverActions(_ actions: [TURNServer.Action]) {
        for action in actions {
            switch action {
            case .toClient(let bytes, let client, let via):
                later { [self] in fromSocket(bytes, from: via, to: client) }
            case .openRelay(let relay, let response, let client, let via):
                openRelays.insert(relay)
                later { [self] in fromSocket(response, from: via, to: client) }
            case .toPeer(let bytes, let relay, let peer):
                later { [self] in fromSocket(bytes, from: relay, to: peer) }
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
        let end = now + timeout
        var steps = 0
        while true {
            drain()
            if condition(self) { return true }
            steps += 1
            precondition(steps < 1_000_000, "the relay network made no progress")
            var next: Instant? = inFlight.map(\.at).min()
            for t in transports { if let d = t.nextDeadline, next == nil || d < next! { next = d } }
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
        for i in 0..<2 {
            if let d = transports[i].nextDeadline, d <= now { transports[i].handle(.timer, now: now) }
        }
        if let d = server.nextDeadline, d <= now { serverActions(server.outputs(after: .timer, now: now)) }
    }

    var bothConnected: Bool { transports.allSatisfy { $0.state == .connected || $0.state == .completed } }

    func received(_ i: Int) -> [[UInt8]] {
        events[i].compactMap { if case .data(let b, _) = $0 { b } else { nil } }
    }

    func announced(_ i: Int) -> [Candidate] {
        events[i].compactMap { if case .localCandidate(let c) = $0 { c } else { nil } }
    }
}
