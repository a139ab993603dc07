// A convergence experiment: every combination of the listed strategies, push-loss values and NAT
// setups, each run for the same trials on the same seeds (trial i of every configuration gets
// the same seed, so `legacy` and ours meet the same networks, store latencies and old records).
// Trials run one after another on the calling thread; their traces are hashed in order.
import RecordStore
import Signaling
import Simulation
import ZoneCore

/// What to run.
public struct ExperimentPlan: Sendable {
    /// Strategy names (`push`, `poll-token`, `poll-fullscan`, `hybrid`) and `legacy`.
    public var strategies: [String]
    public var pushLosses: [Double]
    public var nats: [NATSetup]
    public var trials: Int
    public var seed: UInt64
    /// The push profile (its drop probability is replaced by each push-loss value).
    public var pushProfile: PushProfile
    public var storeLatency: LatencyDistribution
    public var store: StoreConfiguration
    public var faults: StoreFaults
    public var link: LinkProfile
    /// The poll interval of the polling strategies, of hybrid while negotiating and of legacy's signal poll.
    public var pollInterval: Duration
    /// Hybrid's safety-net poll.
    public var safetyPollInterval: Duration
    public var oldEpochs: Int
    public var deadline: Duration
    /// How long a call is followed after it connected (its polling costs count too).
    public var hold: Duration
    /// Keep readable trace lines (for `--trace`).
    public var traceText: Bool
    /// Offer the TURN relay to the peers' ICE (every real deployment does; off to see what it costs).
    public var offerRelay = true

    public init(strategies: [String], pushLosses: [Double], nats: [NATSetup], trials: Int, seed: UInt64,
                pushProfile: PushProfile = .cloudkit, storeLatency: LatencyDistribution = StoreLatencyProfile.cloudkit,
                store: StoreConfiguration = .default, faults: StoreFaults = .none, link: LinkProfile = .broadband,
                pollInterval: Duration = .seconds(2), safetyPollInterval: Duration = .seconds(30), oldEpochs: Int = 0,
                deadline: Duration = .seconds(60), hold: Duration = .zero, traceText: Bool = false) {
        self.strategies = strategies
        self.pushLosses = pushLosses
        self.nats = nats
        self.trials = trials
        self.seed = seed
        self.pushProfile = pushProfile
        self.storeLatency = storeLatency
        self.store = store
        self.faults = faults
        self.link = link
        self.pollInterval = pollInterval
        self.safetyPollInterval = safetyPollInterval
        self.oldEpochs = oldEpochs
        self.deadline = deadline
        self.hold = hold
        self.traceText = traceText
    }

    /// The strategy names an experiment knows.
    public static let strategyNames = SyncStrategy.allCases.map(\.rawValue) + ["legacy"]

    /// One configuration of the grid.
    public struct Cell: Hashable, Sendable {
        public var strategy: String
        public var pushLoss: Double
        public var nat: NATSetup
    }

    /// The grid, in report order: NAT, then push loss, then strategy.
    public var cells: [Cell] {
        nats.flatMap { nat in
            pushLosses.flatMap { loss in strategies.map { Cell(strategy: $0, pushLoss: loss, nat: nat) } }
        }
    }

    /// The trial configuration of a cell.
    public func trialConfiguration(_ cell: Cell) throws(ExperimentError) -> TrialConfiguration {
        guard var signaling = SignalingConfiguration.named(cell.strategy), cell.strategy != "standard" else {
            throw ExperimentError("unknown strategy '\(cell.strategy)': choose from "
                                  + ExperimentPlan.strategyNames.joined(separator: ", "))
        }
        signaling.timing.pollInterval = pollInterval
        signaling.timing.safetyPollInterval = safetyPollInterval
        var push = pushProfile
        push.dropProbability = cell.pushLoss
        return TrialConfiguration(signaling: signaling, push: push, storeLatency: storeLatency, store: store,
                                  faults: faults, nat: cell.nat, link: link, offerRelay: offerRelay,
                                  oldEpochs: oldEpochs, deadline: deadline, traceText: traceText)
    }

    /// Trial `index`'s seed: the same in every configuration.
    public func trialSeed(_ index: Int) -> UInt64 {
        var mix = SplitMix64(state: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        return mix.next()
    }
}

/// An experiment that could not run, and why.
public struct ExperimentError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Where an experiment stands, for a progress line.
public struct ExperimentProgress: Sendable {
    public var cell: Int
    public var cells: Int
    public var trialsDone: Int
    public var trialsTotal: Int
    public var current: ExperimentPlan.Cell
}

/// Runs a plan's trials and summarises them.
public enum ConvergenceExperiment {
    /// Runs every trial of every cell. `progress` is called now and then; `trace` gets every
    /// trial's trace when the plan keeps text.
    public static func run(_ plan: ExperimentPlan, progress: (ExperimentProgress) -> Void = { _ in },
                           trace: (TrialOutcome) -> Void = { _ in }) throws -> ExperimentReport {
        let cells = plan.cells
        let configurations = try cells.map { cell throws(ExperimentError) in try plan.trialConfiguration(cell) }
        let cpuStart = CPUTime.now()
        let stopwatch = Stopwatch()
        var hash = RunTraceHash()
        var summaries: [ConvergenceSummary] = []
        var events = 0
        let total = cells.count * plan.trials
        var done = 0
        for (c, cell) in cells.enumerated() {
            // The room and the old records, set up once for the configuration's trials.
            let scene = try TrialScene(configuration: configurations[c], seed: plan.seed)
            var samples: [CallSample] = []
            samples.reserveCapacity(plan.trials)
            for t in 0..<plan.trials {
                if done % 50 == 0 {
                    progress(ExperimentProgress(cell: c, cells: cells.count, trialsDone: done, trialsTotal: total,
                                                current: cell))
                }
                var trial = try CallTrial(configuration: configurations[c], index: t, seed: plan.trialSeed(t),
                                          scene: scene)
                let outcome = trial.run(hold: plan.hold)
                hash.absorb(outcome.trace)
                events += outcome.events
                samples.append(CallSample(outcome))
                trace(outcome)
                done += 1
            }
            summaries.append(ConvergenceSummary(strategy: cell.strategy, pushLoss: cell.pushLoss,
                                                nat: cell.nat.description, samples: samples))
        }
        progress(ExperimentProgress(cell: cells.count, cells: cells.count, trialsDone: total, trialsTotal: total,
                                    current: cells.last
                                        ?? ExperimentPlan.Cell(strategy: "", pushLoss: 0, nat: .both(nil))))
        let cpu = CPUTime.now() - cpuStart
        return ExperimentReport(
            plan: ExperimentReport.Parameters(plan), configurations: summaries, traceHash: hash.hex, trials: total,
            events: events, cpuSeconds: cpu, wallSeconds: stopwatch.elapsed.seconds)
    }
}
