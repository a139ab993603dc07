// An ICE candidate: RFC 8445 §5.1 (gathering, bases, types, priorities, foundations).
//
// Component 1 only: ZoneRTC multiplexes RTP and RTCP (RFC 5761), so there is no component 2.
// Transport is UDP. This is the ICE module's own value; the SDP `a=candidate` form lives in
// Signaling (`ICECandidate`) and the Peer layer converts between them.

import ZoneCore

/// A transport address an agent can receive on (local) or send to (remote).
public struct Candidate: Hashable, Sendable, CustomStringConvertible {
    /// How the candidate was obtained (RFC 8445 §5.1.1).
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// An address on a local interface, bound by the driver.
        case host
        /// The address a STUN server saw one of our host candidates at.
        case serverReflexive = "srflx"
        /// An address learned from a connectivity check or its response (RFC 8445 §7.2.5.3.1, §7.3.1.3).
        case peerReflexive = "prflx"
        /// An address on a TURN server, allocated by the caller's TURN client (see RelayAllocation.swift).
        case relay
    }

    /// The candidate type.
    public var kind: Kind
    /// The transport address.
    public var address: Endpoint
    /// The local address packets for this candidate are sent from (RFC 8445 §5.1.1.1): the
    /// address itself for host candidates, the host candidate a reflexive one was learned through.
    /// For remote candidates the base is unknown and set to `address`.
    public var base: Endpoint
    /// The priority (RFC 8445 §5.1.2).
    public var priority: UInt32
    /// The foundation (RFC 8445 §5.1.1.3).
    public var foundation: String

    /// The component ID: always 1 (RTP and RTCP multiplexed).
    public var component: UInt8 { 1 }

    /// The related address SDP carries for a non-host candidate (its base).
    public var relatedAddress: Endpoint? { kind == .host ? nil : base }

    public init(kind: Kind, address: Endpoint, base: Endpoint, priority: UInt32, foundation: String) {
        self.kind = kind
        self.address = address
        self.base = base
        self.priority = priority
        self.foundation = foundation
    }

    /// A local host candidate on `address`.
    public static func host(_ address: Endpoint, localPreference: UInt16 = 65535) -> Candidate {
        Candidate(kind: .host, address: address, base: address,
                  priority: Priority.candidate(kind: .host, localPreference: localPreference),
                  foundation: CandidateFoundation.compute(kind: .host, base: address.address))
    }

    /// A local server-reflexive candidate: `address` as seen by `server`, learned through `base`.
    public static func serverReflexive(
        _ address: Endpoint, base: Endpoint, server: Endpoint, localPreference: UInt16 = 65535
    ) -> Candidate {
        Candidate(kind: .serverReflexive, address: address, base: base,
                  priority: Priority.candidate(kind: .serverReflexive, localPreference: localPreference),
                  foundation: CandidateFoundation.compute(kind: .serverReflexive, base: base.address,
                                                          server: server.address))
    }

    /// A remote candidate as signalled by the peer (its base is unknown to us).
    public static func remote(kind: Kind, address: Endpoint, priority: UInt32, foundation: String) -> Candidate {
        Candidate(kind: kind, address: address, base: address, priority: priority, foundation: foundation)
    }

    public var description: String {
        "\(kind.rawValue) \(address)" + (kind == .host ? "" : " base \(base)") + " prio \(priority) fnd \(foundation)"
    }
}
