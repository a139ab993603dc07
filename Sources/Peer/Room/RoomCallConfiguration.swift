// Everything one peer's group call in a room is created with: the room's signaling, and the template
// every leg (a `PeerCall` with one remote member) is made from.

import Signaling
import ZoneCore

/// A peer's group-call configuration: who, how the room signals, where its sockets are, what media
/// goes on every leg.
public struct RoomCallConfiguration: Sendable {
    public var myUserID: String
    /// Presence, the offer rule's bounds, the room's limit, each leg's share of the uplink, and the
    /// signaling every leg's negotiator is made from.
    public var room: RoomSignalingConfiguration
    /// The device's epoch clock (carried from call to call).
    public var epochClock: EpochClock
    /// The local sockets and servers every leg's ICE transports use.
    public var transport: PeerTransportConfiguration
    /// What each leg sends and receives: the same file goes to every member, one stream per leg.
    public var media: CallMediaConfiguration
    /// DTLS-SRTP or plain RTP on each leg's selected pair.
    public var mediaSecurity: MediaProtectionMode = .none
    /// With DTLS-SRTP: a leg whose handshake is not done this long after its pair is selected fails.
    public var dtlsHandshakeTimeout: Duration = .seconds(10)
    /// When a leg hangs up by itself. Its `endAfterMedia` is not used: a leg's media being done ends
    /// nothing, the room leaves once every leg's is (`leaveAfterMedia`). Without a `connectTimeout` of its
    /// own a leg gets `legConnectBound`.
    public var legLifetime: CallLifetime
    /// How long after the room's bounds on waiting for an offer or an answer (`offerFallback` +
    /// `answerTimeout`) a leg may still take to select a pair before it fails. The room's own bounds end
    /// only legs waiting for a description; a remote that sent its offer or answer and then nothing (no
    /// candidate, no end of them: a participant's offer that only claims presence, a member that went
    /// silent) leaves its leg connecting, and this ends it.
    public var legConnectGrace: Duration = .seconds(30)
    /// Leave the room once this many legs' media is done — the other members the call is for — and
    /// `leaveAfterMediaDelay` passed; nil: stay until hung up.
    public var leaveAfterMedia: Int?
    /// Bounds leaving once every expected leg's media is done: `leaveAfterMedia` members may leave
    /// at any moment after their own is done, and ours may still wait on their last packets.
    public var leaveAfterMediaDelay: Duration = .zero
    /// The seed of every random choice (each leg's is drawn from it and the remote's user ID).
    public var seed: UInt64
    /// Sockets for the legs' TURN allocations, one per leg epoch from the epoch's start until its transport
    /// is drained (bound by the driver, none of them a host address): a TURN server tells allocations apart
    /// by the client's address (RFC 8656 §2.2), so legs allocating from the shared host socket would share
    /// one allocation and its relayed data could not be told apart, and a leg's new epoch allocating where
    /// its previous epoch's allocation is still being deleted would be refused (437) or deleted with it.
    /// Empty: legs allocate from the host socket (fine without TURN).
    public var relaySockets: [Endpoint] = []

    public init(myUserID: String, room: RoomSignalingConfiguration = RoomSignalingConfiguration(),
                epochClock: EpochClock = EpochClock(), transport: PeerTransportConfiguration,
                media: CallMediaConfiguration = CallMediaConfiguration(), legLifetime: CallLifetime = CallLifetime(),
                leaveAfterMedia: Int? = nil, seed: UInt64) {
        self.myUserID = myUserID
        self.room = room
        self.epochClock = epochClock
        self.transport = transport
        self.media = media
        self.legLifetime = legLifetime
        self.leaveAfterMedia = leaveAfterMedia
        self.seed = seed
    }

    /// The configuration of the leg with `remote`: the template, its own seed, its signaling template
    /// with `negotiator` in.
    func leg(remote: String, negotiator: CallNegotiator.Configuration) -> PeerCallConfiguration {
        var signaling = room.signaling
        signaling.negotiator = negotiator
        var lifetime = legLifetime
        lifetime.endAfterMedia = false
        if lifetime.connectTimeout == nil { lifetime.connectTimeout = legConnectBound }
        var leg = PeerCallConfiguration(myUserID: myUserID, remoteUserID: remote, signaling: signaling,
                                        epochClock: epochClock, transport: transport, media: media,
                                        lifetime: lifetime, seed: Self.legSeed(seed, remote: remote))
        leg.mediaSecurity = mediaSecurity
        leg.dtlsHandshakeTimeout = dtlsHandshakeTimeout
        return leg
    }

    /// A leg that has selected no pair this long after its start fails (`legConnectGrace`).
    public var legConnectBound: Duration { room.offerFallback + room.answerTimeout + legConnectGrace }

    /// The room's signaling configuration: each leg's descriptions carry what its media and protection
    /// add (media attributes, DTLS fingerprint, direction, dialect, source) — the same a call of two's
    /// `PeerCall` adds, worked out from the leg's own seed so the leg's media sends what was announced.
    var roomSignaling: RoomSignalingConfiguration {
        var room = self.room
        let template = self
        room.legConfiguration = { context in
            let leg = template.leg(remote: context.remote, negotiator: context.base)
            let media = CallMedia(configuration: leg.media, seed: leg.seed)
            return PeerCall.signalingConfiguration(leg, media: media).negotiator
        }
        return room
    }

    /// Relay sockets a driver binds for a room of `maxMembers`: the current epoch of a leg with each other
    /// member, and as many again for epochs still closing beside their successors (an ICE restart's, or a
    /// leg's whose member rejoined).
    public static func relaySocketCount(maxMembers: Int) -> Int { 2 * max(1, maxMembers - 1) }

    /// How long a member of a call for a known number of members waits for the first of the others
    /// (`room.aloneTimeout`, which a driver that knows the count sets).
    public static let aloneTimeout = Duration.seconds(60)

    /// A leg's seed: the room's mixed with the remote's user ID (FNV-1a), so each leg draws its own.
    static func legSeed(_ seed: UInt64, remote: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in remote.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return seed ^ hash
    }
}
