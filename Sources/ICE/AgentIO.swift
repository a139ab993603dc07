// What goes into and comes out of the sans-I/O agent, in the shape of str0m's `Input` and
// `Output`: the caller feeds datagrams and timer ticks with the current instant, and drains
// transmits and events. The one home of these types: the call's transport (ICE plus TURN
// clients, in Peer) takes and gives the same ones.

import ZoneCore

extension ICEAgent {
    /// Something that happened to the agent.
    public enum Input: Hashable, Sendable {
        /// A datagram arrived from `from` on the local socket bound to `to` (a host candidate's address).
        case datagram([UInt8], from: Endpoint, to: Endpoint)
        /// Time passed: `nextDeadline` was reached (calling earlier is harmless).
        case timer
    }

    /// Something the agent wants done or reported.
    public enum Output: Hashable, Sendable {
        /// Send `bytes` from the local socket bound to `from` to `to`.
        case transmit([UInt8], from: Endpoint, to: Endpoint)
        /// Tell the application.
        case event(Event)
    }

    /// What the agent reports.
    ///
    /// A pair and a candidate are large (two candidates of two endpoints each, and a foundation
    /// string) and reported a few times a call, so their cases are `indirect`: held in a box, they
    /// no longer make every output — every transmit queued, popped and passed on — as large as a pair.
    public enum Event: Hashable, Sendable {
        /// The connection state changed.
        case stateChanged(ConnectionState)
        /// A pair was selected (nominated); application data now travels on it.
        indirect case selectedPair(CandidatePair)
        /// A local candidate to signal to the peer (host and server-reflexive; re-announced after a restart).
        indirect case localCandidate(Candidate)
        /// No more local candidates will come in this generation (signal end-of-candidates).
        case gatheringComplete
        /// Application data (not STUN) arrived from `from`.
        case data([UInt8], from: Endpoint)
        /// A TURN server allocated `relayed` for us; it is now a local candidate. Reported by the
        /// transport that runs the agent's TURN clients (`ICETransport`), never by the agent.
        case relayAllocated(relayed: Endpoint, server: Endpoint)
        /// A TURN allocation failed or was lost (`code` is the server's error code, 0 when no
        /// usable answer came). Reported by the transport, never by the agent.
        case relayFailed(server: Endpoint, code: Int, reason: String)
    }
}
