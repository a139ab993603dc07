// A `PeerCall` as one leg of a room's group call (`RoomCall`): the pair's negotiator lives in the
// room's signaling (`RoomSignaling`, one change-sync for every leg), so the leg's own
// `CallSignaling` is never started; the room passes the negotiator's actions in as `.leg` inputs and
// takes what the leg's ICE transports report with `takeLegEvents`. Transports, media protection,
// media and the call's deadlines are the same machine a call of two runs.

import ICE
import Signaling
import ZoneCore

/// What a leg and its room pass each other.
struct RoomLegLink {
    /// The room negotiator's actions for the leg, not yet taken.
    var actions = OutputQueue<CallSignaling.Action>()
    /// What the leg's ICE transports reported, for the room's negotiator.
    var events: [ICEEvent] = []
    /// The remote said goodbye on the leg's path (`MediaGoodbye`), not yet told to the room.
    var remoteSaidGoodbye = false
    /// The relay socket the room lent the next epoch (nil: none free, or no TURN): taken by the epoch's
    /// transport when the negotiator restarts ICE.
    var relaySocketForNextEpoch: Endpoint?

    /// The socket lent the next epoch, once.
    mutating func takeRelaySocket() -> Endpoint? {
        defer { relaySocketForNextEpoch = nil }
        return relaySocketForNextEpoch
    }
}

extension PeerCall {
    /// A leg of a room's group call with `configuration.remoteUserID`: its signaling is the room's.
    public init(leg configuration: PeerCallConfiguration, binding: RoomBinding) throws(SignalRecordError) {
        try self.init(configuration: configuration, binding: binding)
        roomLeg = RoomLegLink()
    }

    /// Whether the call is a leg of a room's group call.
    public var isRoomLeg: Bool { roomLeg != nil }

    /// What the leg's ICE transports reported since the last call, for the room's negotiator (empty for
    /// a call of two: its own signaling took them).
    public mutating func takeLegEvents() -> [ICEEvent] {
        guard let events = roomLeg?.events, !events.isEmpty else { return [] }
        roomLeg?.events = []
        return events
    }

    /// Whether the remote said goodbye on the leg's path since the last call (`MediaGoodbye`: its
    /// close_notify, or its plain goodbye from the selected pair): the room ends the leg.
    public mutating func takeRemoteGoodbye() -> Bool {
        guard roomLeg?.remoteSaidGoodbye == true else { return false }
        roomLeg?.remoteSaidGoodbye = false
        return true
    }

    /// Whether one of the call's transports has the local ICE username fragment `fragment` (a STUN
    /// request names it first in its USERNAME, RFC 8445 §7.2.2: how a room tells which leg a check
    /// from an address it has not seen yet is for).
    public func hasLocalFragment(_ fragment: Substring) -> Bool {
        var found = false
        state.forEachTransport { if $0.credentials.usernameFragment == fragment { found = true } }
        return found
    }
}

extension PeerCall {
    /// Lends the leg's next epoch (the negotiator's next `restartICE`) the relay socket its TURN
    /// allocations are made from; nil: the host socket.
    mutating func lendRelaySocket(_ socket: Endpoint?) {
        roomLeg?.relaySocketForNextEpoch = socket
    }

    /// The relay sockets the call's transports hold: the current epoch's, and those of epochs retired or
    /// closed whose deallocations are not yet answered or timed out. One is free again once no
    /// transport of any leg holds it.
    public var heldRelaySockets: [Endpoint] {
        var held: [Endpoint] = []
        state.forEachTransport { if let socket = $0.relaySocket { held.append(socket) } }
        return held
    }

    /// Whether one of the call's transports allocates from `socket`.
    public func holdsRelaySocket(_ socket: Endpoint) -> Bool {
        var found = false
        state.forEachTransport { found = found || $0.relaySocket == socket }
        return found
    }

    /// Whether a datagram from `from` answers a request one of the call's transports has in flight
    /// (a TURN server's response, shared by the legs of a group call).
    public func awaitsResponse(_ bytes: [UInt8], from: Endpoint) -> Bool {
        var found = false
        state.forEachTransport { transport in
            for local in configuration.transport.hostAddresses where !found {
                found = transport.awaitsResponse(bytes, from: from, to: local)
            }
        }
        return found
    }
}
