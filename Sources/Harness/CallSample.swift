// One call's measurement, whoever made it: a simulated trial, or (for `zonertc bench signaling`)
// a call between real processes. Reports are built from these alone, so simulated and real
// figures can stand side by side in one table.
import Simulation

/// What one call came to.
public struct CallSample: Hashable, Sendable, Codable {
    /// Call start → both peers connected on the same epoch, in seconds; nil when the call did not
    /// get there within its deadline.
    public var convergence: Double?
    /// Store requests both peers made.
    public var storeRequests: Int
    /// Records both peers fetched (every version, every path).
    public var recordsFetched: Int
    /// Bytes of record data both peers fetched.
    public var bytesFetched: Int
    /// Records dropped for a stale epoch.
    public var staleDrops: Int
    /// Record versions that arrived more than once.
    public var duplicates: Int
    /// Offers applied over a set remote description (the reference design's "stale offer after RD").
    public var resets: Int
    /// Call start → the first push notification reaching a device, in seconds.
    public var firstPush: Double?
    /// Call start → the first poll, in seconds.
    public var firstPoll: Double?
    /// Whether the connected path went through the relay.
    public var relayed: Bool?

    public init(convergence: Double?, storeRequests: Int, recordsFetched: Int, bytesFetched: Int, staleDrops: Int,
                duplicates: Int, resets: Int, firstPush: Double?, firstPoll: Double?, relayed: Bool?) {
        self.convergence = convergence
        self.storeRequests = storeRequests
        self.recordsFetched = recordsFetched
        self.bytesFetched = bytesFetched
        self.staleDrops = staleDrops
        self.duplicates = duplicates
        self.resets = resets
        self.firstPush = firstPush
        self.firstPoll = firstPoll
        self.relayed = relayed
    }

    /// The sample of a simulated trial.
    public init(_ trial: TrialOutcome) {
        self.init(convergence: trial.convergence?.seconds, storeRequests: trial.storeRequests,
                  recordsFetched: trial.recordsFetched, bytesFetched: trial.bytesFetched, staleDrops: trial.staleDrops,
                  duplicates: trial.duplicates, resets: trial.resets, firstPush: trial.firstPush?.seconds,
                  firstPoll: trial.firstPoll?.seconds, relayed: trial.path.map { $0 == .relayed })
    }
}
