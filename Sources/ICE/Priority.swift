// Candidate and pair priorities: RFC 8445 §5.1.2 (candidates) and §6.1.2.3 (pairs).
//
//   candidate priority = 2^24 × type preference + 2^8 × local preference + (256 − component ID)
//   pair priority      = 2^32 × MIN(G, D) + 2 × MAX(G, D) + (G > D ? 1 : 0)
//
// where G is the controlling agent's candidate priority and D the controlled agent's.

/// The priority formulas of RFC 8445.
public enum Priority {
    /// The recommended type preferences (RFC 8445 §5.1.2.2): host 126, peer-reflexive 110,
    /// server-reflexive 100, relayed 0.
    public static func typePreference(_ kind: Candidate.Kind) -> UInt32 {
        switch kind {
        case .host: 126
        case .peerReflexive: 110
        case .serverReflexive: 100
        case .relay: 0
        }
    }

    /// A candidate's priority (RFC 8445 §5.1.2.1).
    public static func candidate(kind: Candidate.Kind, localPreference: UInt16, component: UInt8 = 1) -> UInt32 {
        precondition(component >= 1, "ICE components are numbered from 1")
        return (typePreference(kind) << 24) | (UInt32(localPreference) << 8) | (256 - UInt32(component))
    }

    /// A pair's priority (RFC 8445 §6.1.2.3) from the controlling agent's candidate priority
    /// `controlling` (G) and the controlled agent's `controlled` (D).
    ///
    /// Valid candidate priorities are below 2^31 (RFC 8445 §5.1.2.1), so the result fits 64 bits;
    /// a peer's out-of-range priority wraps instead of trapping.
    public static func pair(controlling g: UInt32, controlled d: UInt32) -> UInt64 {
        (UInt64(min(g, d)) << 32) &+ 2 &* UInt64(max(g, d)) &+ (g > d ? 1 : 0)
    }

    /// The local preference of the `index`-th host address: the first is preferred.
    public static func hostLocalPreference(index: Int) -> UInt16 {
        UInt16(clamping: 65535 - index)
    }
}
