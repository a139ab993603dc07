// The call's transport, sans-I/O: an ICE agent (RFC 8445) and, when relays are configured, the
// TURN clients whose allocations give it relayed candidates (RFC 8656, RFC 8445 §5.1.1.2).
//
// The driver binds one UDP socket per host address and feeds every datagram that arrives on
// any of them; whatever must travel through a TURN server is wrapped and unwrapped here, so
// the ICE agent only ever sees its candidates' addresses and the driver only ever sees sockets.

import ICE
import ZoneCore

/// ICE plus relays, as one machine with one input and one output queue.
public struct ICETransport {
    /// Something that happened to the transport.
    public enum Input: Hashable, Sendable {
        /// A datagram arrived from `from` on the local socket bound to `to`.
        case datagram([UInt8], from: Endpoint, to: Endpoint)
        /// `nextDeadline` was reached (calling earlier is harmless).
        case timer
    }

    /// Something the transport wants done or reported.
    public enum Output: Hashable, Sendable {
        /// Send `bytes` from the local socket bound to `from` to `to`.
        case transmit([UInt8], from: Endpoint, to: Endpoint)
        /// Tell the application.
        case event(Event)
    }

    /// What the transport reports.
    public enum Event: Hashable, Sendable {
        /// The ICE connection state changed.
        case stateChanged(ConnectionState)
        /// A pair was selected; application data now travels on it.
        case selectedPair(CandidatePair)
        /// A local candidate to signal to the peer.
        case localCandidate(Candidate)
        /// No more local candidates in this generation.
        case gatheringComplete
        /// Application data arrived from `from`.
        case data([UInt8], from: Endpoint)
    }

    /// Everything the transport is created with.
    public struct Configuration: Sendable {
        /// The ICE agent's configuration (host addresses are the driver's sockets).
        public var agent: AgentConfiguration

        public init(agent: AgentConfiguration) {
            self.agent = agent
        }
    }

    public private(set) var agent: ICEAgent
    private var outputs: [Output] = []
    private var outputHead = 0

    public init(configuration: Configuration, now: Instant) throws(ICEError) {
        agent = try ICEAgent(configuration: configuration.agent, now: now)
        drainAgent()
    }

    // MARK: - ICE, passed through

    /// The current connection state.
    public var state: ConnectionState { agent.state }
    /// The selected pair, once there is one.
    public var selectedPair: CandidatePair? { agent.selectedPair }

    public mutating func setRemoteCredentials(_ credentials: Credentials) throws(ICEError) {
        try agent.setRemoteCredentials(credentials)
    }

    public mutating func addRemoteCandidate(_ candidate: Candidate) {
        agent.addRemoteCandidate(candidate)
        drainAgent()
    }

    public mutating func endOfRemoteCandidates() {
        agent.endOfRemoteCandidates()
        drainAgent()
    }

    public mutating func restart(newCredentials: Credentials) throws(ICEError) {
        try agent.restart(newCredentials: newCredentials)
        drainAgent()
    }

    /// Sends application data on the selected pair.
    public mutating func send(_ bytes: [UInt8]) throws(ICEError) {
        try agent.send(bytes)
        drainAgent()
    }

    public mutating func close() {
        agent.close()
        drainAgent()
    }

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .timer:
            agent.handle(.timer, now: now)
        case .datagram(let bytes, let from, let to):
            agent.handle(.datagram(bytes, from: from, to: to), now: now)
        }
        drainAgent()
    }

    /// The next output, or nil until the next input.
    public mutating func pollOutput() -> Output? {
        guard outputHead < outputs.count else {
            if outputHead > 0 {
                outputs.removeAll(keepingCapacity: true)
                outputHead = 0
            }
            return nil
        }
        defer { outputHead += 1 }
        return outputs[outputHead]
    }

    /// When to call `handle(.timer, now:)` next.
    public var nextDeadline: Instant? { agent.nextDeadline }

    private mutating func drainAgent() {
        while let output = agent.pollOutput() {
            switch output {
            case .transmit(let bytes, let from, let to):
                outputs.append(.transmit(bytes, from: from, to: to))
            case .event(let event):
                switch event {
                case .stateChanged(let state): outputs.append(.event(.stateChanged(state)))
                case .selectedPair(let pair): outputs.append(.event(.selectedPair(pair)))
                case .localCandidate(let candidate): outputs.append(.event(.localCandidate(candidate)))
                case .gatheringComplete: outputs.append(.event(.gatheringComplete))
                case .data(let bytes, let from): outputs.append(.event(.data(bytes, from: from)))
                }
            }
        }
    }
}
