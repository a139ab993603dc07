// One leg of a room's group call: the pair (us, a remote member), negotiated by the same
// `CallNegotiator` a call of two uses, plus what the room keeps about the leg — the remote's member
// session, since when it has waited for an offer or an answer, whether it fell back to offering,
// and the name prefixes its records' deletions are recognised by.
import RecordStore
import ZoneCore

/// What a driver is told when a leg starts (it gives the leg its own ICE transport and media).
public struct LegStart: Hashable, Sendable {
    /// The leg.
    public var leg: LegID
    /// The pair's session key.
    public var sessionKey: SessionKey
    /// Whether we make the first offer (the later joiner does; a call-of-two peer by its roles).
    public var makesFirstOffer: Bool
    /// Whether we yield when offers collide (the higher user ID).
    public var isPolite: Bool
    /// The remote's member session; nil for a peer without a presence record (a call of two).
    public var memberSession: String?
    /// The leg's negotiator configuration (its `b=AS` share among them).
    public var configuration: CallNegotiator.Configuration

    /// Whether the leg starts on the remote's offer and the remote has no presence record (a call-of-two
    /// peer, or a participant of the share not in the group call): the offer proves presence.
    public var onOfferWithoutPresence: Bool { memberSession == nil && !makesFirstOffer }
}

/// A leg, as the room keeps it.
struct RoomLeg: Sendable {
    let id: LegID
    var negotiator: CallNegotiator
    /// The remote's member session, nil while it has none known (an offer came first, or a call-of-two peer).
    var memberSession: String?
    /// When the leg began waiting for an offer, a lookup or an answer (nil: not waiting).
    var waitingSince: Instant?
    /// Whether we offered because the expected offer did not come.
    var fellBack = false
    /// The epoch ICE last failed on and no later epoch has connected since.
    var iceFailed: CallEpoch?
    /// The leg's store requests by kind, each counted as if it had gone alone (batched or not).
    var requests = CallSignaling.RequestCounts()
    /// `SE_<key>_` and `IC_<key>_`, each with the key whole and compacted: what the names of the
    /// pair's envelopes and chunks begin with (a longer key may begin the same way: a deletion
    /// matched by a prefix is checked name by name by the negotiator).
    let namePrefixes: [String]

    init(id: LegID, negotiator: CallNegotiator, memberSession: String?, now: Instant) {
        self.id = id
        self.negotiator = negotiator
        self.memberSession = memberSession
        waitingSince = now
        let key = negotiator.sessionKey.rawValue
        let keys = [key, SignalRecordNames.compact(key)]
        namePrefixes = keys.flatMap { ["SE_\($0)_", "IC_\($0)_"] }
    }

    /// Whether a record named `name` belongs to this leg's pair (by its name alone).
    func owns(_ name: String) -> Bool {
        name == negotiator.names.session || namePrefixes.contains { name.hasPrefix($0) }
    }

    /// The pair's session record.
    var sessionRecordID: RecordID {
        RecordID(recordName: negotiator.names.session, zoneID: negotiator.zone)
    }

    /// Notes the state the negotiator reached at `now`: waiting starts or stops.
    mutating func noteState(now: Instant) {
        switch negotiator.state {
        case .preparing, .waitingForOffer, .offering:
            if waitingSince == nil { waitingSince = now }
        case .idle, .connecting, .connected, .ended:
            waitingSince = nil
        }
    }
}
