// What one simulated call came to: whether and when both peers were connected on the same
// epoch, what signaling cost, and what the network, the store and ICE did on the way.
import Signaling
import TURN
import ZoneCore

/// How the connected peers' data travels.
public enum PathKind: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Host or reflexive candidates on both ends: straight through the NATs.
    case direct
    /// Through the TURN relay.
    case relayed

    public var description: String { rawValue }
}

/// The result of one trial.
public struct TrialOutcome: Sendable {
    /// The trial's number in its run and the seed it ran with.
    public var index: Int
    public var seed: UInt64
    /// Call start → both negotiators connected on the same epoch; nil when that did not happen
    /// within the deadline.
    public var convergence: Duration?
    /// The epoch they connected on.
    public var epoch: CallEpoch?
    /// The path of peer A's selected pair, once connected.
    public var path: PathKind?
    /// Each peer's signaling counters: A (the offer creator), then B.
    public var peers: [SignalingCounters]
    /// Call start → the first push notification reaching either device.
    public var firstPush: Duration?
    /// Call start → the first fetch made because a poll timer fired.
    public var firstPoll: Duration?
    public var network: VirtualNetwork.Counters
    public var store: SimulatedStore.Counters
    /// What the relay's TURN server did (Binding requests, allocations, relayed packets).
    public var relay: TURNServer.Counters
    /// Events the scheduler took.
    public var events: Int
    /// The trial's event trace.
    public var trace: EventTrace
    /// For a trial that hung up: hang-up → both calls closed and their store requests answered;
    /// nil when the trial did not hang up or did not close within `CallTrial.closingLimit`.
    public var closing: Duration?
    /// Allocations the relay still held at the end of the trial.
    public var relayAllocationsLeft: Int

    public var converged: Bool { convergence != nil }
}

extension TrialOutcome {
    /// Store requests both peers made.
    public var storeRequests: Int { peers.reduce(0) { $0 + $1.storeRequests } }
    /// Records both peers fetched (every version, every path).
    public var recordsFetched: Int { peers.reduce(0) { $0 + $1.recordsFetched } }
    /// Bytes of record data both peers fetched.
    public var bytesFetched: Int { peers.reduce(0) { $0 + $1.bytesFetched } }
    /// Records dropped for a stale epoch.
    public var staleDrops: Int { peers.reduce(0) { $0 + $1.staleDrops } }
    /// Record versions that arrived more than once.
    public var duplicates: Int { peers.reduce(0) { $0 + $1.duplicates } }
    /// Offers applied over a set remote description: the reference design's "stale offer after RD".
    public var resets: Int { peers.reduce(0) { $0 + $1.resets } }
}
