// Between the ICE agent's candidates and the SDP form signaling carries (RFC 8839 §5.1).
//
// Only what our agent can use crosses from SDP: UDP, component 1 (RTP and RTCP are
// multiplexed), literal IP addresses. mDNS host names and TCP candidates are left out: the
// agent has no resolver and no TCP transport.

import ICE
import SDP
import Signaling
import ZoneCore

extension ICECandidate {
    /// The SDP form of a local candidate, tagged with the generation's ufrag.
    public init(_ candidate: Candidate, usernameFragment: String?) {
        let related = candidate.relatedAddress
        self.init(
            foundation: candidate.foundation, component: 1, transport: .udp, priority: candidate.priority,
            address: .ip(candidate.address.address), port: candidate.address.port,
            type: CandidateType(candidate.kind),
            relatedAddress: related.map { .ip($0.address) }, relatedPort: related?.port,
            generation: 0, usernameFragment: usernameFragment)
    }

    /// The agent's form of a remote candidate, or nil when the agent cannot use it.
    public var iceCandidate: Candidate? {
        guard transport == .udp, component == 1, let ip = address.ipAddress else { return nil }
        return .remote(kind: Candidate.Kind(type), address: Endpoint(address: ip, port: port),
                       priority: priority, foundation: foundation)
    }
}

extension ICECandidate.CandidateType {
    init(_ kind: Candidate.Kind) {
        switch kind {
        case .host: self = .host
        case .serverReflexive: self = .serverReflexive
        case .peerReflexive: self = .peerReflexive
        case .relay: self = .relay
        }
    }
}

extension Candidate.Kind {
    init(_ type: ICECandidate.CandidateType) {
        switch type {
        case .host: self = .host
        case .serverReflexive: self = .serverReflexive
        case .peerReflexive: self = .peerReflexive
        case .relay: self = .relay
        }
    }
}
