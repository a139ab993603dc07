// The agent's connection state, in the shape of RTCIceConnectionState (W3C WebRTC §4.3.3),
// driven by RFC 8445 (checks, nomination) and RFC 7675 (consent).

/// Where the agent stands with its peer.
public enum ConnectionState: String, Hashable, Sendable, CustomStringConvertible {
    /// Nothing checked yet: no remote candidates, or no credentials.
    case new
    /// Connectivity checks are running; no pair is selected.
    case checking
    /// A pair is selected (nominated); checks may still be running.
    case connected
    /// A pair is selected, the peer said end-of-candidates, gathering is complete and no check is
    /// pending: nothing further will change the selection.
    case completed
    /// The selected pair has gone without a consent response for `disconnectedAfter`; it may recover.
    case disconnected
    /// Every pair failed after end-of-candidates, or consent expired (RFC 7675 §5.1): no traffic flows.
    case failed
    /// The agent was closed.
    case closed

    public var description: String { rawValue }
}
