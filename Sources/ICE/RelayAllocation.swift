// The seam for relayed candidates (RFC 8445 §5.1.1.2 with TURN, RFC 8656).
//
// Not implemented in this module. The TURN client lives in the `TURN` module; when it exists, an
// allocation will give the agent a relayed candidate whose base is the relayed address itself,
// and datagrams on relayed pairs will travel inside Send indications or ChannelData through the
// allocation. Until then the agent gathers no relayed candidates, `Checklist.add` refuses relayed
// local candidates, and remote relayed candidates are paired like any other remote address.

import ZoneCore

/// A TURN allocation as the ICE agent will need it. Nothing in this module conforms to it yet.
public protocol RelayAllocation {
    /// The relayed transport address on the TURN server: the relayed candidate's address and base.
    var relayedAddress: Endpoint { get }
    /// The TURN server the allocation lives on.
    var server: Endpoint { get }
    /// Wraps `payload` for `peer` (Send indication or ChannelData) to go to `server`.
    mutating func wrap(_ payload: [UInt8], to peer: Endpoint) -> [UInt8]
}
