// What goes into and comes out of the sans-I/O TURN client, in the shape of the ICE agent's:
// the caller feeds datagrams from the server and timer ticks with the current instant, and
// drains transmits (always to the server) and events.

import STUN
import ZoneCore

extension TURNClient {
    /// Something that happened to the client.
    public enum Input: Hashable, Sendable {
        /// A datagram arrived from `from` on the socket the client uses; only the server's count.
        case datagram([UInt8], from: Endpoint)
        /// `nextDeadline` was reached (calling earlier is harmless).
        case timer
    }

    /// Something the client wants done or reported.
    public enum Output: Hashable, Sendable {
        /// Send `bytes` to the TURN server `to` from the client's socket.
        case transmit([UInt8], to: Endpoint)
        /// Tell the application.
        case event(Event)
    }

    /// What the client reports. `code` is the server's ERROR-CODE (RFC 8489 §14.8), or
    /// `TURNClient.noResponseCode` (0) when no usable answer came.
    public enum Event: Hashable, Sendable {
        /// The allocation exists (RFC 8656 §7.3): `relayed` is the relayed transport address,
        /// `mapped` the server-reflexive address the server saw us at.
        case allocated(relayed: Endpoint, mapped: Endpoint)
        /// Allocate failed: wrong credentials (401), quota (486), no answer (0)…; the client is done.
        case allocationFailed(code: Int, reason: String)
        /// A Refresh extended the allocation to `lifetime` from now (RFC 8656 §8).
        case refreshed(lifetime: Duration)
        /// A permission for `peer`'s IP address exists (first time; refreshes are silent).
        case permissionCreated(IPAddress)
        /// `channel` is bound to `peer`: data travels as ChannelData from now on.
        case channelBound(channel: UInt16, peer: Endpoint)
        /// A Refresh, CreatePermission or ChannelBind failed; `peer` for the latter two.
        case requestFailed(method: STUNMethod, peer: Endpoint?, code: Int, reason: String)
        /// The allocation is gone without our asking: a Refresh got 437, or it expired.
        case allocationLost(code: Int, reason: String)
        /// The allocation was deleted on our request (Refresh with lifetime 0, RFC 8656 §8).
        case deallocated
        /// Data from `peer`, unwrapped from a Data indication (§11.4) or ChannelData (§12.5).
        case data([UInt8], from: Endpoint)
    }

    /// Where the client stands.
    public enum Phase: Hashable, Sendable {
        /// Allocate is in flight (possibly after a 401 challenge).
        case allocating
        /// The allocation exists.
        case allocated
        /// Refresh with lifetime 0 is in flight.
        case deallocating
        /// No allocation, for good: it failed, was lost, or was deallocated.
        case closed
    }

    /// What the client counted, for logs and tests.
    public struct Counters: Hashable, Sendable {
        /// Datagrams that were neither STUN nor ChannelData, or did not decode.
        public var malformed = 0
        /// Datagrams from somewhere else than the server, unknown transactions or channels,
        /// responses whose integrity did not check.
        public var ignored = 0
        /// Requests sent again by the retransmission timer.
        public var retransmissions = 0
        /// Payloads dropped: queue full, permission refused, allocation gone.
        public var droppedPayloads = 0
        /// Payloads sent in Send indications and in ChannelData.
        public var sendIndications = 0
        public var channelDataSent = 0

        public init() {}
    }
}
