// Channel bindings, as the client keeps them: RFC 8656 §12 (ChannelBind: numbers 0x4000–0x4FFF,
// one peer transport address per channel and one channel per peer, lifetime 600 s, refreshed by
// binding the same number to the same peer again) and §12.4–§12.5 (ChannelData both ways).
//
// A number stays with its peer for the life of the allocation, even after a failed bind: §12
// forbids rebinding a channel to another peer until 5 minutes after it expired, and the client
// never needs to, with 4096 numbers.

import ZoneCore

/// The client's view of one channel.
struct TURNChannel {
    enum State: Hashable {
        /// ChannelBind sent, no answer yet: data goes in Send indications meanwhile.
        case pending
        /// Bound; ChannelData from now on; refresh due at `refreshAt`.
        case bound(refreshAt: Instant)
        /// The server refused: Send indications for this peer from now on.
        case failed
    }

    let number: UInt16
    let peer: Endpoint
    var state: State
    var requestInFlight: Bool

    var isBound: Bool { if case .bound = state { true } else { false } }

    /// When this channel next needs the client: its refresh, if nothing is in flight.
    var deadline: Instant? {
        guard !requestInFlight, case .bound(let refreshAt) = state else { return nil }
        return refreshAt
    }
}
