// An experiment's results: the plan it ran, one summary per configuration, the trace hash and
// what it cost. Encodable as the command's JSON; rendered as a table, CSV and SVG by `Reports/`.
import Simulation

/// The results of a convergence experiment.
public struct ExperimentReport: Sendable, Codable {
    /// The plan's values, as reported.
    public struct Parameters: Sendable, Codable {
        public var strategies: [String]
        public var pushLosses: [Double]
        public var nats: [String]
        public var trials: Int
        public var seed: UInt64
        public var profile: String
        public var storeLatency: String
        public var link: String
        public var pollIntervalSeconds: Double
        public var oldEpochs: Int
        public var deadlineSeconds: Double
        public var holdSeconds: Double
        public var relay: Bool

        public init(_ plan: ExperimentPlan) {
            strategies = plan.strategies
            pushLosses = plan.pushLosses
            nats = plan.nats.map(\.description)
            trials = plan.trials
            seed = plan.seed
            profile = plan.pushProfile.name
            storeLatency = plan.storeLatency.description
            link = plan.link.description
            pollIntervalSeconds = plan.pollInterval.seconds
            oldEpochs = plan.oldEpochs
            deadlineSeconds = plan.deadline.seconds
            holdSeconds = plan.hold.seconds
            relay = plan.offerRelay
        }
    }

    public var plan: Parameters
    public var configurations: [ConvergenceSummary]
    /// SHA-256 of every trial's event trace, in order: equal for equal seeds and plans.
    public var traceHash: String
    /// Trials run in all, and the scheduler events they took.
    public var trials: Int
    public var events: Int
    /// CPU and wall time of the run.
    public var cpuSeconds: Double
    public var wallSeconds: Double

    /// Simulated calls per CPU second.
    public var trialsPerCPUSecond: Double { cpuSeconds > 0 ? Double(trials) / cpuSeconds : 0 }

    private enum CodingKeys: String, CodingKey {
        case plan, configurations, traceHash, trials, events, cpuSeconds, wallSeconds, trialsPerCPUSecond
    }

    public init(plan: Parameters, configurations: [ConvergenceSummary], traceHash: String, trials: Int, events: Int,
                cpuSeconds: Double, wallSeconds: Double) {
        self.plan = plan
        self.configurations = configurations
        self.traceHash = traceHash
        self.trials = trials
        self.events = events
        self.cpuSeconds = cpuSeconds
        self.wallSeconds = wallSeconds
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        plan = try c.decode(Parameters.self, forKey: .plan)
        configurations = try c.decode([ConvergenceSummary].self, forKey: .configurations)
        traceHash = try c.decode(String.self, forKey: .traceHash)
        trials = try c.decode(Int.self, forKey: .trials)
        events = try c.decode(Int.self, forKey: .events)
        cpuSeconds = try c.decode(Double.self, forKey: .cpuSeconds)
        wallSeconds = try c.decode(Double.self, forKey: .wallSeconds)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(plan, forKey: .plan)
        try c.encode(configurations, forKey: .configurations)
        try c.encode(traceHash, forKey: .traceHash)
        try c.encode(trials, forKey: .trials)
        try c.encode(events, forKey: .events)
        try c.encode(cpuSeconds, forKey: .cpuSeconds)
        try c.encode(wallSeconds, forKey: .wallSeconds)
        try c.encode(trialsPerCPUSecond, forKey: .trialsPerCPUSecond)
    }
}
