// One call epoch's ICE generation (one call epoch = one ICE generation, docs/SIGNALING.md §3), held
// from the negotiator's `restartICE` until it is drained: while it is the current epoch's, then,
// replaced or closed, until its TURN deallocations are answered or time out.
//
// The negotiator may hand over the remote description and candidates before our own
// description is set (an answerer applies the offer first); the agent is only created when our
// description is set, because only then do we know our role: the offerer controls (RFC 8445
// §6.1.1 via JSEP, RFC 8829 §3.5.1). So what arrives early waits here.
//
// A class: the call's phases hand it on — current, retiring beside a newer epoch's, closing —
// and one object is the transport's one owner through all of them.

import ICE
import SDP
import Signaling
import ZoneCore

final class EpochTransport {
    let epoch: CallEpoch
    let credentials: ICECredentials
    /// The socket this epoch's TURN allocations are made from (nil: the host socket of the server's family):
    /// a call of two's configured one; a group call's leg gets one of its own per epoch, held until the epoch is
    /// drained (`RoomCall`, docs/GROUP-CALLS.md "Through a TURN relay").
    let relaySocket: Endpoint?
    private(set) var remoteCredentials: ICECredentials?
    private var pendingRemote: [Candidate] = []
    private var remoteEnded = false
    private(set) var transport: ICETransport?
    /// Whether the agent was made (our description is set).
    private(set) var hasStarted = false
    /// Datagrams of the media protection made before this epoch selected a pair (the remote's DTLS
    /// ClientHello can arrive first): sent once one is, instead of waiting for a retransmission.
    private var heldForPair: [[UInt8]] = []
    static let heldForPairLimit = 16

    init(epoch: CallEpoch, credentials: ICECredentials, relaySocket: Endpoint? = nil) {
        self.epoch = epoch
        self.credentials = credentials
        self.relaySocket = relaySocket
    }

    /// Creates the agent once our description is set; until then inputs wait.
    func start(role: Role, configuration: PeerTransportConfiguration, seed: UInt64, now: Instant) throws(ICEError) {
        guard transport == nil else { return }
        var agent = AgentConfiguration(
            hostAddresses: configuration.hostAddresses, stunServers: configuration.stunServers, role: role,
            credentials: Credentials(ufrag: credentials.usernameFragment, password: credentials.password),
            seed: seed)
        agent.pacing = configuration.pacing
        agent.consent = configuration.consent
        var transportConfiguration = configuration.transport(agent: agent)
        transportConfiguration.relaySocket = relaySocket
        var transport = try ICETransport(configuration: transportConfiguration, now: now)
        if let remote = remoteCredentials {
            try transport.setRemoteCredentials(Credentials(ufrag: remote.usernameFragment, password: remote.password))
        }
        self.transport = transport
        hasStarted = true
        flush()
    }

    func setRemote(credentials: ICECredentials?, candidates: [Candidate], ended: Bool) throws(ICEError) {
        if let credentials {
            remoteCredentials = credentials
            try transport?.setRemoteCredentials(
                Credentials(ufrag: credentials.usernameFragment, password: credentials.password))
        }
        add(candidates, ended: ended)
    }

    func add(_ candidates: [Candidate], ended: Bool) {
        pendingRemote += candidates
        remoteEnded = remoteEnded || ended
        flush()
    }

    /// Hands waiting remote candidates to the agent once it has remote credentials.
    private func flush() {
        guard hasStarted, remoteCredentials != nil else { return }
        for candidate in pendingRemote { transport?.addRemoteCandidate(candidate) }
        pendingRemote.removeAll()
        if remoteEnded { transport?.endOfRemoteCandidates() }
    }

    // MARK: The transport, once there is one

    var selectedPair: CandidatePair? { transport?.selectedPair }
    var state: ConnectionState? { transport?.state }
    var nextDeadline: Instant? { transport?.nextDeadline }
    /// The longest its closing may take (see `ICETransport.closingBound`).
    var closingBound: Duration { transport?.closingBound ?? .zero }

    /// Feeds a datagram; false when there is no transport yet to take it.
    func receive(_ bytes: [UInt8], from: Endpoint, to: Endpoint, now: Instant) -> Bool {
        guard hasStarted else { return false }
        transport?.handle(.datagram(bytes, from: from, to: to), now: now)
        return true
    }

    /// Feeds the timer if the transport's deadline has come.
    func timer(now: Instant) {
        guard let deadline = transport?.nextDeadline, deadline <= now else { return }
        transport?.handle(.timer, now: now)
    }

    func pollOutput() -> ICETransport.Output? { transport?.pollOutput() }

    /// Whether a datagram answers one of this transport's TURN requests still in flight.
    func awaitsResponse(_ bytes: [UInt8], from: Endpoint, to: Endpoint) -> Bool {
        transport?.awaitsResponse(bytes, from: from, to: to) ?? false
    }

    /// Stops ICE and deletes the allocations; returns how many held datagrams were dropped.
    @discardableResult
    func close(now: Instant) -> Int {
        transport?.close(now: now)
        defer { heldForPair.removeAll() }
        return heldForPair.count
    }

    /// Sends on the selected pair (there is one: see `selectedPair`).
    func send(_ bytes: [UInt8]) throws(ICEError) {
        try transport?.send(bytes)
    }

    /// Holds a datagram for the pair to come; false when the hold is full.
    func hold(_ bytes: [UInt8]) -> Bool {
        guard heldForPair.count < Self.heldForPairLimit else { return false }
        heldForPair.append(bytes)
        return true
    }

    /// The datagrams held for the pair, now that there is one.
    func takeHeld() -> [[UInt8]] {
        defer { heldForPair.removeAll() }
        return heldForPair
    }

    /// What the transport dropped (zeros before it was made).
    var drops: ICETransport.Drops { transport?.drops ?? ICETransport.Drops() }
}
