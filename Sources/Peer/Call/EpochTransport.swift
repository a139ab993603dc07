// One call epoch's ICE generation (spec: one call epoch = one ICE generation), held from the
// negotiator's `restartICE` until the next epoch replaces it.
//
// The negotiator may hand over the remote description and candidates before our own
// description is set (an answerer applies the offer first); the agent is only created when our
// description is set, because only then do we know our role: the offerer controls (RFC 8445
// §6.1.1 via JSEP, RFC 8829 §3.5.1). So what arrives early waits here.

import ICE
import Signaling
import ZoneCore

struct EpochTransport {
    let epoch: CallEpoch
    let credentials: ICECredentials
    var remoteCredentials: ICECredentials?
    var pendingRemote: [Candidate] = []
    var remoteEnded = false
    var transport: ICETransport?

    init(epoch: CallEpoch, credentials: ICECredentials) {
        self.epoch = epoch
        self.credentials = credentials
    }

    /// Creates the agent once our description is set; until then inputs wait.
    mutating func start(role: Role, configuration: PeerTransportConfiguration, seed: UInt64,
                        now: Instant) throws(ICEError) {
        guard transport == nil else { return }
        var agent = AgentConfiguration(
            hostAddresses: configuration.hostAddresses, stunServers: configuration.stunServers, role: role,
            credentials: Credentials(ufrag: credentials.usernameFragment, password: credentials.password),
            seed: seed)
        agent.pacing = configuration.pacing
        agent.consent = configuration.consent
        var transport = try ICETransport(configuration: configuration.transport(agent: agent), now: now)
        if let remote = remoteCredentials {
            try transport.setRemoteCredentials(Credentials(ufrag: remote.usernameFragment, password: remote.password))
        }
        // Moved in, not copied: the transport is ~1.9 KB and was copied and then destroyed here.
        self.transport = consume transport
        flush()
    }

    mutating func setRemote(credentials: ICECredentials?, candidates: [Candidate], ended: Bool) throws(ICEError) {
        if let credentials {
            remoteCredentials = credentials
            try transport?.setRemoteCredentials(
                Credentials(ufrag: credentials.usernameFragment, password: credentials.password))
        }
        add(candidates, ended: ended)
    }

    mutating func add(_ candidates: [Candidate], ended: Bool) {
        pendingRemote += candidates
        remoteEnded = remoteEnded || ended
        flush()
    }

    /// Hands waiting remote candidates to the agent once it has remote credentials.
    private mutating func flush() {
        guard transport != nil, remoteCredentials != nil else { return }
        for candidate in pendingRemote { transport!.addRemoteCandidate(candidate) }
        pendingRemote.removeAll()
        if remoteEnded { transport!.endOfRemoteCandidates() }
    }
}
