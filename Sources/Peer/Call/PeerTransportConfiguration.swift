// Where a peer's ICE runs: the driver's sockets and the servers it may use.

import ICE
import ZoneCore

/// The network side of a peer's configuration.
public struct PeerTransportConfiguration: Sendable {
    /// The local endpoints of the UDP sockets the driver bound (host candidates).
    public var hostAddresses: [Endpoint]
    /// STUN servers for server-reflexive candidates.
    public var stunServers: [Endpoint]
    /// Ta, the pacing of connectivity checks.
    public var pacing: Duration
    /// TURN servers to allocate relayed candidates on.
    public var turnServers: [TURNServerCredentials]
    /// Send only through a relay: only relayed local candidates are paired.
    public var relayOnly: Bool
    /// Consent freshness on the selected pair (RFC 7675: checks every 5 s, lost after 30 s).
    public var consent: ConsentConfiguration
    /// The socket TURN allocations are made from, when not the first host socket of the server's family:
    /// a group call gives each leg its own (`RoomCallConfiguration.relaySockets`).
    public var relaySocket: Endpoint?

    public init(hostAddresses: [Endpoint], stunServers: [Endpoint] = [], pacing: Duration = .milliseconds(5),
                turnServers: [TURNServerCredentials] = [], relayOnly: Bool = false,
                consent: ConsentConfiguration = ConsentConfiguration()) {
        self.hostAddresses = hostAddresses
        self.stunServers = stunServers
        self.pacing = pacing
        self.turnServers = turnServers
        self.relayOnly = relayOnly
        self.consent = consent
    }

    func transport(agent: AgentConfiguration) -> ICETransport.Configuration {
        var configuration = ICETransport.Configuration(agent: agent, turnServers: turnServers, relayOnly: relayOnly)
        configuration.relaySocket = relaySocket
        return configuration
    }
}
