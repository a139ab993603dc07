// Two ICE agents back to back on the shared `TestNetwork` (the simulator's scheduler and virtual
// network) with per-path latency, jitter (which reorders), seeded loss, an optional one-to-one NAT
// mapping, and a tiny STUN server. Nothing sleeps: the network jumps the clock to the next
// arrival or deadline.

import STUN
import TestNetwork
import ZoneCore
@testable import ICE

/// How datagrams travel between two endpoints.
struct PathModel {
    var latency: Duration = .milliseconds(5)
    var jitter: Duration = .zero
    var loss: Double = 0
}

/// A delivered or dropped datagram, for the determinism log.
struct TransmitRecord: Hashable {
    var sender: Int
    var at: Instant
    var from: Endpoint
    var to: Endpoint
    var bytes: [UInt8]
}

final class Harness {
    let net: TestNetwork
    var agents: [ICEAgent] = []
    var events: [[(Instant, ICEAgent.Event)]] = [[], []]
    var received: [[[UInt8]]] = [[], []]
    var log: [TransmitRecord] = []
    /// Send sequence numbers in delivery order: out of order when the path reordered datagrams.
    var arrivals: [Int] { net.arrivalOrder }
    let path: PathModel
    /// Forward candidates and end-of-candidates to the other agent as they appear.
    var autoTrickle = true
    /// Packets from these agents are dropped (the peer "stops answering").
    var silenced: Set<Int> = []
    /// Private → public address of agent 0's socket, as a one-to-one NAT would map it.
    var nat: [Endpoint: Endpoint] = [:]
    /// A STUN server here answers Binding requests with `stunMapped[source]` (or the source).
    var stunServer: Endpoint?
    var stunMapped: [Endpoint: Endpoint] = [:]
    /// Relayed addresses (as a TURN server would hold them) → the agent they deliver to.
    var relayed: [Endpoint: Int] = [:]


    static let hostA = try! Endpoint(parsing: "10.0.0.1:5000")
    static let hostB = try! Endpoint(parsing: "10.0.0.2:6000")
    static let credentialsA = Credentials(ufrag: "AAAA", password: "aaaaaaaaaaaaaaaaaaaaaaaa")
    static let credentialsB = Credentials(ufrag: "BBBB", password: "bbbbbbbbbbbbbbbbbbbbbbbb")

    init(seed: UInt64 = 1, path: PathModel = PathModel(), roles: (Role, Role) = (.controlling, .controlled),
         tieBreakers: (UInt64?, UInt64?) = (nil, nil), nomination: Nomination = .default,
         hosts: ([Endpoint], [Endpoint]) = ([hostA], [hostB]), stunServers: [Endpoint] = [],
         autoTrickle: Bool = true, configure: (inout AgentConfiguration) -> Void = { _ in }) {
        net = TestNetwork(start: .seconds(1_700_000_000), seed: seed ^ 0x5EED,
                          link: TestNetwork.link(path: path.latency, jitter: path.jitter, loss: path.loss))
        self.path = path
        self.autoTrickle = autoTrickle
        var configA = AgentConfiguration(hostAddresses: hosts.0, stunServers: stunServers, role: roles.0,
                                         credentials: Harness.credentialsA, nomination: nomination,
                                         seed: seed, tieBreaker: tieBreakers.0)
        var configB = AgentConfiguration(hostAddresses: hosts.1, stunServers: stunServers, role: roles.1,
                                         credentials: Harness.credentialsB, nomination: nomination,
                                         seed: seed &+ 1, tieBreaker: tieBreakers.1)
        configure(&configA)
        configure(&configB)
        agents = [try! ICEAgent(configuration: configA, now: net.now),
                  try! ICEAgent(configuration: configB, now: net.now)]
        try! agents[0].setRemoteCredentials(Harness.credentialsB)
        try! agents[1].setRemoteCredentials(Harness.credentialsA)
    }

    var a: ICEAgent { agents[0] }
    var b: ICEAgent { agents[1] }
    var now: Instant { net.now }

    static func remote(_ c: Candidate) -> Candidate {
        Candidate.remote(kind: c.kind, address: c.address, priority: c.priority, foundation: c.foundation)
    }

    /// Drains both agents: transmits go on the network, events are recorded (and trickled).
    func drain() {
        var progress = true
        while progress {
            progress = false
            for i in 0..<2 {
                while let output = agents[i].pollOutput() {
                    progress = true
                    switch output {
                    case .transmit(let bytes, let from, let to):
                        send(bytes, from: from, to: to, sender: i)
                    case .event(let event):
                        events[i].append((now, event))
                        switch event {
                        case .localCandidate(let c) where autoTrickle:
                            agents[1 - i].addRemoteCandidate(Harness.remote(c))
                        case .gatheringComplete where autoTrickle:
                            agents[1 - i].endOfRemoteCandidates()
                        case .data(let bytes, _):
                            received[i].append(bytes)
                        default:
                            break
                        }
                    }
                }
            }
        }
    }

    private func send(_ bytes: [UInt8], from: Endpoint, to: Endpoint, sender: Int) {
        log.append(TransmitRecord(sender: sender, at: now, from: from, to: to, bytes: bytes))
        guard !silenced.contains(sender) else { return }
        net.send(bytes, from: nat[from] ?? from, to: to)
    }

    private func deliver(_ packet: Arrival) {
        if let server = stunServer, packet.to == server {
            guard let request = try? STUNMessage(decoding: packet.payload) else { return }
            let mapped = stunMapped[packet.from] ?? packet.from
            let response = request.successResponse(attributes: [.xorMappedAddress(mapped)])
            net.send(try! response.encode(fingerprint: true), from: server, to: packet.from)
            return
        }
        if let owner = relayed[packet.to] {
            agents[owner].handle(.datagram(packet.payload, from: packet.from, to: packet.to), now: now)
            return
        }
        let destination = nat.first(where: { $0.value == packet.to })?.key ?? packet.to
        for i in 0..<2 where agents[i].configuration.hostAddresses.contains(destination) {
            agents[i].handle(.datagram(packet.payload, from: packet.from, to: destination), now: now)
        }
    }

    /// Runs until `condition` holds or `timeout` of virtual time passes; true when it held.
    @discardableResult
    func run(for timeout: Duration = .seconds(60), until condition: (Harness) -> Bool = { _ in false }) -> Bool {
        net.run(for: timeout, drain: drain, deadline: { agents.compactMap(\.nextDeadline).min() },
                deliver: deliver, tick: tick, until: { condition(self) })
    }

    private func tick() {
        for i in 0..<2 {
            if let d = agents[i].nextDeadline, d <= now { agents[i].handle(.timer, now: now) }
        }
    }

    /// True when both agents are connected or completed.
    var bothConnected: Bool {
        agents.allSatisfy { $0.state == .connected || $0.state == .completed }
    }

    /// The instants at which agent `i` reported `state`.
    func times(_ i: Int, reached state: ConnectionState) -> [Instant] {
        events[i].compactMap { if case .stateChanged(state) = $0.1 { $0.0 } else { nil } }
    }
}
