import Harness
import Simulation
import Testing

@Suite("Convergence experiments")
struct ExperimentTests {
    static let plan = ExperimentPlan(strategies: ["poll-token", "legacy"], pushLosses: [0, 0.5],
                                     nats: [.both(nil), .both(.portRestrictedCone)], trials: 3, seed: 9,
                                     oldEpochs: 2)

    @Test("every combination runs, in NAT, push-loss, strategy order, on the same seeds; same plan, same hash")
    func grid() throws {
        let report = try ConvergenceExperiment.run(Self.plan)
        #expect(report.configurations.count == 8 && report.trials == 24)
        let order = Array(repeating: ["poll-token", "legacy"], count: 4).flatMap { $0 }
        #expect(report.configurations.map(\.strategy) == order)
        #expect(report.configurations.map(\.nat).prefix(4).allSatisfy { $0 == "none" })
        #expect(report.traceHash.count == 64)
        #expect(try ConvergenceExperiment.run(Self.plan).traceHash == report.traceHash)
        var other = Self.plan
        other.seed = 10
        #expect(try ConvergenceExperiment.run(other).traceHash != report.traceHash)
        #expect(report.trialsPerCPUSecond > 0 && report.events > 0)
        // Legacy and ours met the same old records: legacy reset, ours dropped them.
        let legacy = report.configurations.filter { $0.strategy == "legacy" }
        let ours = report.configurations.filter { $0.strategy == "poll-token" }
        #expect(legacy.reduce(0) { $0 + $1.totalResets } > 0)
        #expect(ours.allSatisfy { $0.totalResets == 0 && $0.staleDrops > 0 })
    }

    @Test("an unknown strategy is refused with the names that exist")
    func unknownStrategy() {
        var plan = Self.plan
        plan.strategies = ["carrier-pigeon"]
        #expect(throws: ExperimentError.self) { try ConvergenceExperiment.run(plan) }
    }
}
