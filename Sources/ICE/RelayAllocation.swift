// Relayed candidates: RFC 8445 §5.1.1.2 (gathered from TURN servers), §5.1.2.2 (type preference
// 0), §5.1.1.3 (foundation from type, base and server), §6.1.2 (paired like any local candidate).
//
// The agent does not speak TURN; its caller does (the Peer layer's `ICETransport` composes a
// TURN client per server). Once an allocation exists, the caller hands the agent the relayed
// address with `ICEAgent.addLocalRelayedCandidate(relayed:server:)`. For the agent the relayed
// address is an ordinary base (a relayed candidate is its own base, §5.1.1.2): checks and data
// on relayed pairs leave "from" it, and the caller wraps them for the TURN server (Send indication
// or ChannelData); what the TURN server delivers for it the caller unwraps and feeds back as
// datagrams "to" it. `AgentConfiguration.expectedRelayedCandidates` holds end-of-gathering back
// until each expected allocation either produced its candidate or was reported unavailable.

import ZoneCore

extension Candidate {
    /// A local relayed candidate: `address` allocated on the TURN server `server`; its own base.
    public static func relayed(_ address: Endpoint, server: Endpoint, localPreference: UInt16 = 65535) -> Candidate {
        Candidate(kind: .relay, address: address, base: address,
                  priority: Priority.candidate(kind: .relay, localPreference: localPreference),
                  foundation: CandidateFoundation.compute(kind: .relay, base: address.address,
                                                          server: server.address))
    }
}
