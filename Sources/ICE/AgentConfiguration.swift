// The knobs of an ICE agent. Defaults suit loopback and the simulator: pacing Ta = 20 ms
// (RFC 8445 §14.2: at least 5 ms, 50 ms by default there), checks with an initial RTO of 100 ms
// and 7 retransmissions (STUN's one client transaction, RFC 8489 §6.2.1).

import STUN
import ZoneCore

/// Everything an `ICEAgent` is created with.
public struct AgentConfiguration: Sendable {
    /// The local endpoints of the sockets the driver bound: one host candidate each, the first
    /// preferred. Loopback addresses are allowed.
    public var hostAddresses: [Endpoint]
    /// STUN servers to learn server-reflexive candidates from (RFC 8445 §5.1.1.2).
    public var stunServers: [Endpoint]
    /// The initial role; a role conflict may change it (RFC 8445 §7.3.1.1).
    public var role: Role
    /// This agent's ufrag and password for the first generation.
    public var credentials: Credentials
    /// How the controlling agent nominates.
    public var nomination: Nomination
    /// Ta: the interval between two ordinary or triggered checks (RFC 8445 §6.1.4.2, §14.2).
    public var pacing: Duration
    /// Retransmission of connectivity and consent checks.
    public var checkTiming: STUNTransactionTiming
    /// Retransmission of Binding requests to STUN servers.
    public var gatheringTiming: STUNTransactionTiming
    /// Consent freshness (RFC 7675).
    public var consent: ConsentConfiguration
    /// How many relayed candidates the caller will add (`ICEAgent.addLocalRelayedCandidate`) or
    /// report unavailable: gathering is complete only once all of them have come or failed.
    public var expectedRelayedCandidates: Int
    /// The seed of every random choice: tie-breaker, transaction IDs, consent jitter.
    public var seed: UInt64
    /// The tie-breaker (RFC 8445 §7.1.3); drawn from `seed` when nil.
    public var tieBreaker: UInt64?
    /// Remote candidates kept per generation; more are dropped and counted. The peer signals
    /// them, so a hostile one could otherwise grow the checklist (and the checks sent) without
    /// bound; RFC 8445 §6.1.2.5 limits the checklist for the same reason (100 pairs there).
    public var maxRemoteCandidates = 100

    /// Checks: 100 ms initial RTO doubling to 1.6 s, 8 sends, then Rm = 16 × RTO (1.6 s).
    public static let defaultCheckTiming = STUNTransactionTiming(
        initialRTO: .milliseconds(100), maxRTO: .milliseconds(1600), maxRetransmits: 7)
    /// Binding requests to STUN servers: 250 ms initial RTO doubling to 1.6 s, 5 sends, then
    /// Rm = 16 × RTO (4 s).
    public static let defaultGatheringTiming = STUNTransactionTiming(
        initialRTO: .milliseconds(250), maxRTO: .milliseconds(1600), maxRetransmits: 4)

    public init(
        hostAddresses: [Endpoint], stunServers: [Endpoint] = [], role: Role, credentials: Credentials,
        nomination: Nomination = .default, pacing: Duration = .milliseconds(20),
        checkTiming: STUNTransactionTiming = AgentConfiguration.defaultCheckTiming,
        gatheringTiming: STUNTransactionTiming = AgentConfiguration.defaultGatheringTiming,
        consent: ConsentConfiguration = ConsentConfiguration(), expectedRelayedCandidates: Int = 0, seed: UInt64,
        tieBreaker: UInt64? = nil
    ) {
        precondition(pacing > .zero, "the pacing interval Ta must be positive")
        precondition(expectedRelayedCandidates >= 0, "a count of relayed candidates cannot be negative")
        self.hostAddresses = hostAddresses
        self.stunServers = stunServers
        self.role = role
        self.credentials = credentials
        self.nomination = nomination
        self.pacing = pacing
        self.checkTiming = checkTiming
        self.gatheringTiming = gatheringTiming
        self.consent = consent
        self.expectedRelayedCandidates = expectedRelayedCandidates
        self.seed = seed
        self.tieBreaker = tieBreaker
    }
}
