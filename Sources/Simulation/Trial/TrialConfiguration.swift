// Everything one simulated call is made of, apart from its seed: which signaling the peers run,
// how the store and its push service behave, what stands between the peers on the network,
// what the zone already holds, and how long the call may take.
import RecordStore
import Signaling
import ZoneCore

/// The conditions of one simulated call.
public struct TrialConfiguration: Sendable {
    /// The signaling both peers run (ours with a strategy, or `legacy`).
    public var signaling: SignalingConfiguration
    /// How pushes reach the devices (its `dropProbability` is the push loss).
    public var push: PushProfile
    /// Round-trip time of a store request.
    public var storeLatency: LatencyDistribution
    /// The engine's limits, throttling and injected errors.
    public var store: StoreConfiguration
    public var faults: StoreFaults
    /// The NATs in front of the peers.
    public var nat: NATSetup
    /// The peers' access links.
    public var link: LinkProfile
    /// The relay's link.
    public var relayLink: LinkProfile
    /// Offer the TURN relay to the peers' ICE (takes effect once the peer transport gathers
    /// relayed candidates: see `CallTrial.relaysGathered`).
    public var offerRelay: Bool
    /// Epochs of earlier calls whose records are in the zone when this call starts.
    public var oldEpochs: Int
    /// How long the call may take to connect before it counts as failed.
    public var deadline: Duration
    /// Keep the readable text of the trace (slow; for `--trace`).
    public var traceText: Bool

    public init(signaling: SignalingConfiguration, push: PushProfile = .cloudkit,
                storeLatency: LatencyDistribution = StoreLatencyProfile.cloudkit,
                store: StoreConfiguration = .default, faults: StoreFaults = .none, nat: NATSetup = .both(nil),
                link: LinkProfile = .broadband, relayLink: LinkProfile = .datacenter, offerRelay: Bool = true,
                oldEpochs: Int = 0, deadline: Duration = .seconds(60), traceText: Bool = false) {
        self.signaling = signaling
        self.push = push
        self.storeLatency = storeLatency
        self.store = store
        self.faults = faults
        self.nat = nat
        self.link = link
        self.relayLink = relayLink
        self.offerRelay = offerRelay
        self.oldEpochs = oldEpochs
        self.deadline = deadline
        self.traceText = traceText
    }
}

/// Store round-trip times by profile. Apple publishes no latency figures: `cloudkit` is an
/// assumption from developers' reports (a few hundred milliseconds per operation, long tail) and
/// configurable with `--store-latency`.
public enum StoreLatencyProfile {
    /// Median 150 ms, 95th percentile 400 ms (log-normal).
    public static let cloudkit = LatencyDistribution.logNormal(median: .milliseconds(150), p95: .milliseconds(400))
    /// 0.2–1 ms: one machine.
    public static let lan = LatencyDistribution.uniform(.microseconds(200), .milliseconds(1))

    /// The store latency that goes with a push profile's name (`lan…` → lan, anything else → cloudkit).
    public static func matching(pushProfile name: String) -> LatencyDistribution {
        name.hasPrefix("lan") ? lan : cloudkit
    }
}
