// The ICE side of one peer's call, sans-I/O: it carries out the negotiator's `ICECommand`s on an
// `ICETransport` (RFC 8445) and reports what the transport does as the negotiator's `ICEEvent`s.
//
// It keeps what a peer connection keeps about ICE and nothing more: one ICE generation per call
// epoch (SIGNALING-SPEC §3), our description of it, the remote description applied to it. Like
// `RTCPeerConnection` it gathers from the start but hands candidates over only once the local
// description of their generation is set (JSEP §5.2.3), refuses candidates of another
// generation (`addIceCandidate` fails), and refuses an answer when no offer of ours waits for
// one (InvalidStateError). A remote description applied again without new credentials is a
// renegotiation that keeps the ICE connection, so a connected generation is reported connected
// again; new credentials are an ICE restart (RFC 8445 §9) the connection has to come through.
import ICE
import Signaling
import ZoneCore

/// One peer's ICE for a call: negotiator commands in, datagrams and ICE events out.
public struct CallTransport {
    /// How the transport's agents are made.
    public struct Configuration: Sendable {
        /// The local endpoints of the sockets the driver bound (one host candidate each).
        public var hostAddresses: [Endpoint]
        /// STUN servers for server-reflexive candidates.
        public var stunServers: [Endpoint]
        /// The ICE role at the call's first generation (the offer creator controls, RFC 8445 §6.1.1);
        /// restarts keep the agent's role, conflicts are resolved by the agents.
        public var role: Role
        /// Seeds every random choice of the agents.
        public var seed: UInt64
        /// Pacing, timing and nomination of the agents (credentials and addresses are set here).
        public var nomination: Nomination = .default
        public var pacing: Duration = .milliseconds(20)
        public var checkTiming = TransactionTiming()
        public var gatheringTiming = TransactionTiming(initialRTO: .milliseconds(250), maxRetransmits: 4)

        public init(hostAddresses: [Endpoint], stunServers: [Endpoint] = [], role: Role, seed: UInt64) {
            self.hostAddresses = hostAddresses
            self.stunServers = stunServers
            self.role = role
            self.seed = seed
        }
    }

    /// What the transport wants done or reported.
    public enum Output: Hashable, Sendable {
        /// Send `bytes` from the local socket bound to `from` to `to`.
        case transmit([UInt8], from: Endpoint, to: Endpoint)
        /// Tell the negotiator.
        case event(ICEEvent)
    }

    /// What went wrong or was refused, for reports.
    public struct Counters: Hashable, Sendable, Codable {
        /// Remote candidates refused: no remote description of their epoch (`addIceCandidate` fails).
        public var candidatesRefused = 0
        /// Remote candidates whose address is a host name or not UDP (not usable here).
        public var candidatesUnusable = 0
        /// Remote answers refused: no offer of ours waited for one.
        public var answersRefused = 0
        /// Remote offers applied over a remote description of the same or a later epoch.
        public var offersOverRemoteDescription = 0
        /// ICE generations started (the first included).
        public var generations = 0
        /// Times a generation was reported connected.
        public var connections = 0

        public init() {}
    }

    public let configuration: Configuration
    /// The transport, once the first generation started.
    public private(set) var transport: ICETransport?
    /// The epoch of the current ICE generation.
    public private(set) var epoch: CallEpoch?
    /// The epoch the transport last reported connected.
    public private(set) var connectedEpoch: CallEpoch?
    public private(set) var counters = Counters()

    private var localUfrag: String?
    /// Our description of the current generation: set, and whether it is an offer awaiting its answer.
    private var localDescriptionSet = false
    private var awaitingAnswer = false
    /// The remote description's epoch and credentials.
    private var remoteEpoch: CallEpoch?
    private var remoteCredentials: Credentials?
    /// Local candidates gathered before our description was set, and whether gathering finished.
    private var heldCandidates: [Candidate] = []
    private var gatheringComplete = false
    private var closed = false
    private var outputs: [Output] = []
    private var outputHead = 0
    private var lastNow: Instant

    public init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        lastNow = now
    }

    /// When to call `handle(.timer, now:)` next.
    public var nextDeadline: Instant? { closed ? nil : transport?.nextDeadline }

    /// The pair data travels on, once one is selected.
    public var selectedPair: CandidatePair? { transport?.selectedPair }

    /// Carries out a negotiator command.
    public mutating func perform(_ command: ICECommand, now: Instant) {
        guard !closed else { return }
        lastNow = max(lastNow, now)
        switch command {
        case .restartICE(let epoch, let credentials):
            startGeneration(epoch, credentials: Credentials(ufrag: credentials.usernameFragment,
                                                            password: credentials.password), now: now)
        case .setLocalDescription(let epoch, let description):
            guard epoch == self.epoch else { return }
            localDescriptionSet = true
            awaitingAnswer = description.type == .offer
            releaseHeldCandidates(epoch)
        case .applyRemoteDescription(let epoch, let description):
            applyRemote(description, epoch: epoch)
        case .addRemoteCandidates(let epoch, let candidates, let endOfCandidates):
            guard epoch == remoteEpoch, epoch == self.epoch, transport != nil else {
                counters.candidatesRefused += candidates.count
                return
            }
            for candidate in candidates {
                guard let remote = Self.remoteCandidate(candidate) else {
                    counters.candidatesUnusable += 1
                    continue
                }
                transport!.addRemoteCandidate(remote)
            }
            if endOfCandidates { transport!.endOfRemoteCandidates() }
            drain()
        case .close:
            closed = true
            transport?.close()
            drain()
        }
    }

    /// Feeds a datagram or a timer tick to the transport.
    public mutating func handle(_ input: ICETransport.Input, now: Instant) {
        guard !closed, transport != nil else { return }
        lastNow = max(lastNow, now)
        transport!.handle(input, now: now)
        drain()
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

    // MARK: Generations

    private mutating func startGeneration(_ epoch: CallEpoch, credentials: Credentials, now: Instant) {
        self.epoch = epoch
        localUfrag = credentials.ufrag
        localDescriptionSet = false
        awaitingAnswer = false
        remoteEpoch = nil
        remoteCredentials = nil
        heldCandidates = []
        gatheringComplete = false
        counters.generations += 1
        if transport == nil {
            let agent = AgentConfiguration(
                hostAddresses: configuration.hostAddresses, stunServers: configuration.stunServers,
                role: configuration.role, credentials: credentials, nomination: configuration.nomination,
                pacing: configuration.pacing, checkTiming: configuration.checkTiming,
                gatheringTiming: configuration.gatheringTiming, seed: configuration.seed)
            do {
                transport = try ICETransport(configuration: ICETransport.Configuration(agent: agent), now: now)
            } catch {
                outputs.append(.event(.failed(epoch: epoch)))
                return
            }
        } else {
            do {
                try transport!.restart(newCredentials: credentials)
            } catch {
                outputs.append(.event(.failed(epoch: epoch)))
                return
            }
        }
        drain()
    }

    private mutating func applyRemote(_ description: SessionDescription, epoch: CallEpoch) {
        guard let section = description.media.first(where: { $0.kind == .video && !$0.isRejected }),
              let sdpCredentials = description.iceCredentials(for: section)
        else { return }
        let credentials = Credentials(ufrag: sdpCredentials.usernameFragment, password: sdpCredentials.password)
        switch description.type {
        case .answer, .provisionalAnswer:
            guard awaitingAnswer, epoch == self.epoch else {
                counters.answersRefused += 1
                return
            }
            awaitingAnswer = false
        case .offer:
            if let remoteEpoch, remoteEpoch >= epoch { counters.offersOverRemoteDescription += 1 }
            awaitingAnswer = false
        }
        guard var transport else { return }
        let renegotiation = remoteEpoch == epoch && remoteCredentials == credentials
        remoteEpoch = epoch
        remoteCredentials = credentials
        do {
            try transport.setRemoteCredentials(credentials)
        } catch {
            self.transport = transport
            return
        }
        for candidate in section.candidates {
            if let remote = Self.remoteCandidate(candidate) { transport.addRemoteCandidate(remote) }
        }
        if description.endOfCandidates(for: section) { transport.endOfRemoteCandidates() }
        self.transport = transport
        drain()
        // The same credentials again: a renegotiation, which leaves a connected ICE connection up.
        if renegotiation, epoch == self.epoch, connectedEpoch == epoch,
           transport.selectedPair.map({ $0.generation == transport.agent.generation }) == true {
            counters.connections += 1
            outputs.append(.event(.connected(epoch: epoch)))
        }
    }

    private mutating func releaseHeldCandidates(_ epoch: CallEpoch) {
        if !heldCandidates.isEmpty {
            outputs.append(.event(.localCandidates(epoch: epoch, heldCandidates.map(signalled))))
            heldCandidates = []
        }
        if gatheringComplete { outputs.append(.event(.gatheringComplete(epoch: epoch))) }
    }

    // MARK: Transport outputs

    private mutating func drain() {
        guard transport != nil else { return }
        while let output = transport!.pollOutput() {
            switch output {
            case .transmit(let bytes, let from, let to):
                outputs.append(.transmit(bytes, from: from, to: to))
            case .event(let event):
                transportEvent(event)
            }
        }
    }

    private mutating func transportEvent(_ event: ICETransport.Event) {
        guard let epoch else { return }
        switch event {
        case .localCandidate(let candidate):
            if localDescriptionSet {
                outputs.append(.event(.localCandidates(epoch: epoch, [signalled(candidate)])))
            } else {
                heldCandidates.append(candidate)
            }
        case .gatheringComplete:
            if localDescriptionSet {
                outputs.append(.event(.gatheringComplete(epoch: epoch)))
            } else {
                gatheringComplete = true
            }
        case .selectedPair(let pair):
            guard pair.generation == transport?.agent.generation else { return }
            connectedEpoch = epoch
            counters.connections += 1
            outputs.append(.event(.connected(epoch: epoch)))
        case .stateChanged(let state):
            if state == .failed { outputs.append(.event(.failed(epoch: epoch))) }
        case .data:
            break
        }
    }

    // MARK: Candidate forms

    /// Our candidate as signalled: `a=candidate` with the generation's ufrag (RFC 8839 §5.1).
    private func signalled(_ candidate: Candidate) -> ICECandidate {
        let type: ICECandidate.CandidateType
        switch candidate.kind {
        case .host: type = .host
        case .serverReflexive: type = .serverReflexive
        case .peerReflexive: type = .peerReflexive
        case .relay: type = .relay
        }
        let related = candidate.relatedAddress
        return ICECandidate(
            foundation: candidate.foundation, priority: candidate.priority, address: .ip(candidate.address.address),
            port: candidate.address.port, type: type, relatedAddress: related.map { .ip($0.address) },
            relatedPort: related?.port, usernameFragment: localUfrag)
    }

    /// A signalled candidate as the agent takes it; nil for host names and TCP.
    static func remoteCandidate(_ candidate: ICECandidate) -> Candidate? {
        guard candidate.transport == .udp, candidate.component == 1, let ip = candidate.address.ipAddress else {
            return nil
        }
        let kind: Candidate.Kind
        switch candidate.type {
        case .host: kind = .host
        case .serverReflexive: kind = .serverReflexive
        case .peerReflexive: kind = .peerReflexive
        case .relay: kind = .relay
        }
        return .remote(kind: kind, address: Endpoint(address: ip, port: candidate.port), priority: candidate.priority,
                       foundation: candidate.foundation)
    }
}
