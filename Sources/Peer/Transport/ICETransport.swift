// The call's transport, sans-I/O: an ICE agent (RFC 8445) and, when relays are configured, the
// TURN clients whose allocations give it relayed candidates (RFC 8656, RFC 8445 §5.1.1.2).
//
// The driver binds one UDP socket per host address and feeds every datagram that arrives on
// any of them; whatever must travel through a TURN server is wrapped and unwrapped here, so
// the ICE agent only ever sees its candidates' addresses and the driver only ever sees sockets:
//
//   - each TURN client allocates from the first host socket of its server's family at start (or from
//     `relaySocket`, a socket of its own that is no host candidate: a group call's leg);
//     once allocated, the relayed address becomes a local candidate of the agent;
//   - the agent's transmits "from" a relayed address go to that TURN client, which wraps them
//     (Send indication, ChannelData once a channel is bound) and sends them to its server from
//     its host socket;
//   - datagrams from a TURN server on its client's socket go to that client, and what it
//     unwraps reaches the agent as a datagram from the peer "to" the relayed address. Binding
//     messages are the agent's own (a TURN server may also be its STUN server).
//
// With `relayOnly` the agent gets no host candidates (and gathers no server-reflexive ones): it
// announces and pairs relayed candidates only, so the call goes through the relay.

import ICE
import STUN
import TURN
import ZoneCore

/// ICE plus relays, as one machine with one input and one output queue.
public struct ICETransport {
    /// Something that happened to the transport: the agent's inputs (one home, `ICE/AgentIO.swift`).
    public typealias Input = ICEAgent.Input
    /// Something the transport wants done or reported: the agent's outputs, plus the relay events.
    public typealias Output = ICEAgent.Output
    /// What the transport reports.
    public typealias Event = ICEAgent.Event

    /// Everything the transport is created with.
    public struct Configuration: Sendable {
        /// The ICE agent's configuration (host addresses are the driver's sockets).
        public var agent: AgentConfiguration
        /// TURN servers to allocate relayed candidates on, one allocation each.
        public var turnServers: [TURNServerCredentials]
        /// Announce and pair relayed candidates only: the call goes through a relay.
        public var relayOnly: Bool
        /// Retransmission of TURN requests (RFC 8489 §6.2.1; 500 ms initial RTO by default).
        public var turnTiming: STUNTransactionTiming
        /// The local socket the TURN clients allocate from instead of the host sockets. A TURN server
        /// tells allocations apart by their 5-tuple (RFC 8656 §2.2), so transports sharing a host socket
        /// (a group call's legs) each need a socket of their own to hold allocations of their own.
        public var relaySocket: Endpoint?

        public init(agent: AgentConfiguration, turnServers: [TURNServerCredentials] = [], relayOnly: Bool = false,
                    turnTiming: STUNTransactionTiming = STUNTransactionTiming()) {
            self.agent = agent
            self.turnServers = turnServers
            self.relayOnly = relayOnly
            self.turnTiming = turnTiming
        }
    }

    /// One TURN client and the host socket it talks to its server from.
    private struct Relay {
        var client: TURNClient
        let socket: Endpoint
        /// Whether a refused send through this relay was reported (once: ICE's checks on the
        /// relayed pairs fail by themselves, the rest is counted in `unsentThroughRelays`).
        var refusalReported = false
        var server: Endpoint { client.configuration.server }
    }

    public private(set) var agent: ICEAgent
    private var relays: [Relay] = []
    private var lastNow: Instant
    private var outputs = OutputQueue<Output>()
    /// Datagrams the agent sent from a relayed address that its TURN client refused (no
    /// allocation any more, a peer of the other family, too large for one TURN message).
    public private(set) var unsentThroughRelays = 0

    /// What a transport dropped, for a call's summary: never silently.
    public struct Drops: Hashable, Sendable, Codable {
        /// Datagrams that looked like STUN or ChannelData and did not decode (the agent's and the
        /// TURN clients'), or STUN other than Binding reaching the agent.
        public var malformed = 0
        /// Requests and responses of our own that could not be encoded: not sent.
        public var unencodable = 0
        /// Application data from no known remote candidate (RFC 8445 §7.3: anyone could send it).
        public var unknownSource = 0
        /// Datagrams the agent sent from a relayed address that its TURN client refused.
        public var unsentThroughRelays = 0
        /// Payloads a TURN client dropped: queue full, permission refused, allocation gone.
        public var relayPayloads = 0

        public init() {}

        public static func + (a: Drops, b: Drops) -> Drops {
            var sum = a
            sum.malformed += b.malformed
            sum.unencodable += b.unencodable
            sum.unknownSource += b.unknownSource
            sum.unsentThroughRelays += b.unsentThroughRelays
            sum.relayPayloads += b.relayPayloads
            return sum
        }

        /// Every drop counted.
        public var total: Int { malformed + unencodable + unknownSource + unsentThroughRelays + relayPayloads }
    }

    /// What the agent and the relays dropped so far.
    public var drops: Drops {
        var drops = Drops()
        drops.malformed = agent.malformedMessages
        drops.unencodable = agent.unencodableMessages
        drops.unknownSource = agent.droppedDatagrams
        drops.unsentThroughRelays = unsentThroughRelays
        for relay in relays {
            drops.malformed += relay.client.counters.malformed
            drops.relayPayloads += relay.client.counters.droppedPayloads
        }
        return drops
    }

    public init(configuration: Configuration, now: Instant) throws(ICEError) {
        var agentConfiguration = configuration.agent
        let hosts = configuration.relaySocket.map { [$0] } ?? configuration.agent.hostAddresses
        // Each server is reached from the first host socket of its family (or the relay socket).
        let usable = configuration.turnServers.compactMap { turn in
            hosts.first { $0.family == turn.server.family }.map { (turn, $0) }
        }
        agentConfiguration.expectedRelayedCandidates += usable.count
        if configuration.relayOnly {
            agentConfiguration.hostAddresses = []
            agentConfiguration.stunServers = []
        }
        agent = try ICEAgent(configuration: agentConfiguration, now: now)
        lastNow = now
        closingBound = configuration.turnTiming.timeout * 2
        for (index, (turn, socket)) in usable.enumerated() {
            let client = TURNClient(configuration: TURNClientConfiguration(
                server: turn.server, username: turn.username, password: turn.password,
                timing: configuration.turnTiming, seed: configuration.agent.seed &+ 0x7475_726E &+ UInt64(index)),
                now: now)
            relays.append(Relay(client: client, socket: socket))
        }
        for turn in configuration.turnServers where !usable.contains(where: { $0.0 == turn }) {
            outputs.append(.event(.relayFailed(server: turn.server, code: TURNClient.noResponseCode,
                                               reason: "no host socket of the server's address family")))
        }
        pump(now: now)
    }

    // MARK: - ICE, passed through

    /// The current connection state.
    public var state: ConnectionState { agent.state }
    /// The selected pair, once there is one.
    public var selectedPair: CandidatePair? { agent.selectedPair }
    /// The relayed addresses allocated so far.
    public var relayedAddresses: [Endpoint] { relays.compactMap { $0.client.relayedAddress } }

    public mutating func setRemoteCredentials(_ credentials: Credentials) throws(ICEError) {
        defer { updateDeadline() }
        try agent.setRemoteCredentials(credentials)
    }

    public mutating func addRemoteCandidate(_ candidate: Candidate) {
        agent.addRemoteCandidate(candidate)
        pump(now: lastNow)
    }

    public mutating func endOfRemoteCandidates() {
        agent.endOfRemoteCandidates()
        pump(now: lastNow)
    }

    /// Sends application data on the selected pair (through its relay when the pair is relayed).
    public mutating func send(_ bytes: [UInt8]) throws(ICEError) {
        try agent.send(bytes)
        pump(now: lastNow)
    }

    /// Closes the agent and deletes the allocations (Refresh with lifetime 0) at `now`: keep
    /// feeding datagrams and timers until `nextDeadline` is nil for the deallocations to be answered.
    public mutating func close(now: Instant) {
        lastNow = max(lastNow, now)
        agent.close()
        for i in relays.indices { relays[i].client.deallocate(now: lastNow) }
        pump(now: lastNow)
    }

    /// Whether a datagram from `from` on the socket `to` answers a request one of this transport's
    /// TURN clients still waits for: with several transports on one socket (a closing one beside
    /// its successor), the one a TURN server's answer is for.
    public func awaitsResponse(_ bytes: [UInt8], from: Endpoint, to: Endpoint) -> Bool {
        relays.contains { $0.server == from && $0.socket == to && $0.client.awaitsResponse(bytes) }
    }

    /// The longest a closed transport may take to be drained: its deallocations' transactions, and
    /// one more after a challenge (401 or 438, RFC 8489 §9.2.5) starts them again.
    public let closingBound: Duration

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        lastNow = max(lastNow, now)
        switch input {
        case .timer:
            agent.handle(.timer, now: now)
            for i in relays.indices { relays[i].client.handle(.timer, now: now) }
        case .datagram(let bytes, let from, let to):
            if !ICETransport.isBinding(bytes),
               let i = relays.firstIndex(where: { $0.server == from && $0.socket == to }) {
                relays[i].client.handle(.datagram(bytes, from: from), now: now)
            } else {
                agent.handle(.datagram(bytes, from: from, to: to), now: now)
            }
        }
        pump(now: now)
    }

    /// The next output, or nil until the next input.
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// When to call `handle(.timer, now:)` next. Worked out whenever the agent or a relay may have
    /// changed (the end of every pump, new remote credentials).
    public private(set) var nextDeadline: Instant?

    private mutating func updateDeadline() {
        var next = agent.nextDeadline
        for i in relays.indices { next = .earliest(next, relays[i].client.nextDeadline) }
        nextDeadline = next
    }

    // MARK: - Plumbing

    /// True for a STUN Binding message (RFC 8489 §5: method bits of the first two bytes).
    private static func isBinding(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 20, bytes[0] < 4 else { return false }
        return STUNMessageType(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1])).method == .binding
    }

    /// Moves outputs between the agent, the TURN clients and the output queue until all are quiet.
    private mutating func pump(now: Instant) {
        var progressed = true
        while progressed {
            progressed = false
            while let output = agent.pollOutput() {
                progressed = true
                agentOutput(output, now: now)
            }
            for i in relays.indices {
                while let output = relays[i].client.pollOutput() {
                    progressed = true
                    relayOutput(output, relay: i, now: now)
                }
            }
        }
        updateDeadline()
    }

    private mutating func agentOutput(_ output: consuming ICEAgent.Output, now: Instant) {
        switch output {
        case .transmit(let bytes, let from, let to):
            if let i = relays.firstIndex(where: { $0.client.relayedAddress == from }) {
                do throws(TURNClientError) {
                    try relays[i].client.send(bytes, to: to, now: now)
                } catch {
                    // UDP, and ICE retransmits what matters; said once, counted always.
                    unsentThroughRelays += 1
                    guard !relays[i].refusalReported else { return }
                    relays[i].refusalReported = true
                    outputs.append(.event(.relayFailed(server: relays[i].server, code: 0,
                                                       reason: "cannot send through the relay: \(error)")))
                }
            } else {
                outputs.append(.transmit(bytes, from: from, to: to))
            }
        case .event(let event):
            outputs.append(.event(event))
        }
    }

    private mutating func relayOutput(_ output: consuming TURNClient.Output, relay i: Int, now: Instant) {
        let server = relays[i].server
        switch output {
        case .transmit(let bytes, let to):
            outputs.append(.transmit(bytes, from: relays[i].socket, to: to))
        case .event(.allocated(let relayed, _)):
            agent.addLocalRelayedCandidate(relayed: relayed, server: server)
            outputs.append(.event(.relayAllocated(relayed: relayed, server: server)))
        case .event(.allocationFailed(let code, let reason)):
            agent.relayedCandidateUnavailable()
            outputs.append(.event(.relayFailed(server: server, code: code, reason: reason)))
        case .event(.allocationLost(let code, let reason)):
            outputs.append(.event(.relayFailed(server: server, code: code, reason: reason)))
        case .event(.data(let payload, let peer)):
            if let relayed = relays[i].client.relayedAddress {
                agent.handle(.datagram(payload, from: peer, to: relayed), now: now)
            }
        case .event(.refreshed), .event(.permissionCreated), .event(.channelBound), .event(.requestFailed),
             .event(.deallocated):
            break  // ICE's own checks tell whether the relayed paths work
        }
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`): datagrams and timers in, transmits
/// and events out; the signaled inputs (remote credentials and candidates, application data,
/// close) are methods, as on the agent, and their outputs come out of the same queue.
extension ICETransport: SansIOMachine {}
