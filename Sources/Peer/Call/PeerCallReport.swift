// What a call's summary tells beyond its milestones: written as the call goes, for the user and
// for tests, and never read by the call's decisions (those read `PeerCallState`, the one source
// of truth about where the call is).

import ICE
import ZoneCore

/// A call's record for its summary: the last path, the last ICE state, restarts, and every drop.
public struct PeerCallReport: Sendable {
    /// The last pair selected, kept after the path failed or the call ended.
    public internal(set) var lastSelectedPair: CandidatePair?
    /// The last ICE connection state a transport reported.
    public internal(set) var iceState: ConnectionState = .new
    /// Why the last TURN allocation failed, if one did.
    public internal(set) var relayFailure: String?
    /// ICE restarts tried since the call first connected.
    public internal(set) var restartsTried = 0
    /// Datagrams for the pair that could not be sent: no transport, no pair and the hold full, the
    /// transport refused them, or an ICE restart dropped those held for the old epoch's pair.
    public internal(set) var unsentDatagrams = 0
    /// Datagrams no transport took: before the first epoch's transport was made, or after the call
    /// closed its transports (a late consent check, say).
    public internal(set) var datagramsWithoutTransport = 0
    /// Plain goodbyes naming the leg's remote that did not come on the leg's selected pair: refused.
    public internal(set) var refusedGoodbyes = 0
    /// What the transports the call let go of had dropped (the live ones count in `PeerCall.drops`).
    var drainedTransportDrops = ICETransport.Drops()

    public init() {}
}
