// How a room's group call signals (docs/PROTOCOL.md §11): the sync paths, timing and leg template
// of a call of two, plus presence, the room's limit, the bounds on waiting for a pair's offer or
// answer, and each leg's share of the uplink.
import SDP
import ZoneCore

/// Everything that decides how a peer signals in a room's group call.
public struct RoomSignalingConfiguration: Sendable {
    /// The ingestion paths (shared by every leg), their timing, and the template of each leg's negotiator.
    public var signaling: SignalingConfiguration
    /// Presence records: TTL, refresh interval, clock skew allowed.
    public var presence: PresencePolicy = .default
    /// Members of the call at most, this peer included: those ranked later by join order leave.
    public var maxMembers = 5
    /// How long a member waits for the offer its partner owes it before offering itself (the
    /// fallback). 8 s: four fast polls (2 s) while negotiating, time for a lost push to be made up.
    public var offerFallback: Duration = .seconds(8)
    /// How long an offer (or, before it, the session lookup) may go unanswered before the leg ends
    /// as unanswered. 40 s: longer than hybrid's 30 s safety poll, so a partner that missed every
    /// push still answers in time.
    public var answerTimeout: Duration = .seconds(40)
    /// How long a member that expects others waits, once joined, for the first leg; then it leaves
    /// ("no other member joined within …"). nil: it waits until hung up. `RoomCall` sets 60 s when it
    /// knows how many members the call is for: the unanswered bound (40 s) and 20 s for the others to
    /// start.
    public var aloneTimeout: Duration?
    /// How recent a call-of-two peer's `RoomMember` record or offer must be for us to call it or
    /// answer it (older ones are left over from earlier calls).
    public var pairPeerWindow: Duration = .seconds(120)
    /// How long after seeing a fresh `RoomMember` record without a `CallMember` one we wait (and then
    /// fetch once more) before calling that user as a call-of-two peer: a group-call member saves its
    /// presence right after setting the room up.
    public var pairPeerGrace: Duration = .seconds(3)
    /// This peer's uplink in kilobits per second: each leg's descriptions carry `b=AS` of
    /// `uplinkKbps / (members − 1)`, members counted when the leg starts (nil: no `b=AS`).
    public var uplinkKbps: UInt64?
    /// Each leg's negotiator configuration, made from the template (`signaling.negotiator` with the
    /// leg's `b=AS` in) and the leg; nil uses the template as it is. Phase by phase a driver gives
    /// each leg its own DTLS identity or media attributes here.
    public var legConfiguration: (@Sendable (LegContext) -> CallNegotiator.Configuration)?

    public init(signaling: SignalingConfiguration = .default) {
        self.signaling = signaling
    }

    /// What a leg's configuration is made for.
    public struct LegContext: Sendable {
        /// The remote member.
        public var remote: String
        /// Members present when the leg starts, this peer included.
        public var members: Int
        /// The template with the leg's `b=AS` in.
        public var base: CallNegotiator.Configuration
    }

    /// The configuration of a leg with `remote` among `members` members.
    func leg(remote: String, members: Int) -> CallNegotiator.Configuration {
        var base = signaling.negotiator
        if let uplinkKbps {
            let share = uplinkKbps / UInt64(max(1, members - 1))
            base.bandwidths = [SDPBandwidth(type: "AS", value: share)]
        }
        return legConfiguration?(LegContext(remote: remote, members: members, base: base)) ?? base
    }
}
