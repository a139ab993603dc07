// A group-call experiment: for each strategy and push-loss value of a plan, its trials run as
// simulated group calls of N members (`RoomTrial`, the real `RoomCall` in each member) joining as the
// schedule says; trial i of every configuration gets the same seed. The summary has what issue 28
// asks of the simulator: time until every pair is connected on the same epoch at both ends, the late
// joiner's time to all its pairs and the epochs the others' pairs started meanwhile, what each member
// cost, and with a leave scenario how fast the others closed the pair and what was left in the zone.
import Signaling
import Simulation
import ZoneCore

/// One configuration's group-call trials, summed up.
public struct MeshSummary: Sendable, Codable {
    public var strategy: String
    public var pushLoss: Double
    public var members: Int
    public var join: String
    public var leave: String
    public var trials: Int
    /// First join → every pair connected on one epoch at both ends, seconds (nil: none succeeded).
    public var allPairsP50: Double?
    public var allPairsP90: Double?
    public var allPairsP99: Double?
    public var allPairsMax: Double?
    /// Trials in which some pair never connected.
    public var failed: Int
    /// With late joining: the last member's join → all its pairs connected, seconds.
    public var lateJoinerP50: Double?
    public var lateJoinerP99: Double?
    public var lateJoinerMax: Double?
    /// With late joining: epochs the pairs already connected started after the last member joined, over
    /// all trials (both ends counted), and the most in one trial.
    public var existingPairEpochs: Int?
    public var existingPairEpochsMaxPerTrial: Int?
    /// With a leave scenario: the member's leaving → every other member ended its leg with it, seconds
    /// (nil: not in every trial), and trials where some member did not within the bound.
    public var leaveCloseP50: Double?
    public var leaveCloseP99: Double?
    public var leaveCloseMax: Double?
    public var leaveNotClosed: Int?
    /// With a leave scenario: the share of the others' legs with the member that ended on its goodbye on the
    /// leg's path (docs/PROTOCOL.md §11.4), the rest on its departure read from the store (or, after a crash,
    /// consent expiry).
    public var leaveClosedOnGoodbye: Double?
    /// With a leave scenario: trials where someone's leaving was not answered, trials that left presence
    /// or signal records in the zone after everyone hung up, and those records in all.
    public var leaveUnfinished: Int?
    public var trialsWithRecordsLeft: Int?
    public var recordsLeft: Int?
    /// Per member per call: store requests by kind, and in all.
    public var fetchesPerPeer: Double
    public var savesPerPeer: Double
    public var deletesPerPeer: Double
    public var lookupsPerPeer: Double
    public var requestsPerPeer: Double
    /// Store requests of the whole call (every member).
    public var requestsPerCall: Double
    /// Per member: records and kilobytes fetched, and the share of fetched records that were other pairs'.
    public var recordsPerPeer: Double
    public var kilobytesPerPeer: Double
    public var otherPairsShare: Double
    /// Pushes delivered per device per minute.
    public var pushesPerDeviceMinute: Double
    /// Over all trials: epochs abandoned, resets (offers over a set remote description), throttled fetches.
    public var abandonedEpochs: Int
    public var resets: Int
    public var throttled: Int

    init(strategy: String, pushLoss: Double, members: Int, join: JoinSchedule, leave: LeaveScenario,
         outcomes: [RoomTrialOutcome]) {
        self.strategy = strategy
        self.pushLoss = pushLoss
        self.members = members
        self.join = join.description
        self.leave = leave.description
        trials = outcomes.count
        func seconds(_ d: Duration) -> Double { Double(d.nanoseconds) / 1e9 }
        let all = outcomes.compactMap(\.allPairs).map(seconds).sorted()
        failed = outcomes.count - all.count
        func rank(_ sorted: [Double], _ p: Double, of total: Int) -> Double? {
            // Failures count as slower than every success: a percentile among them is nil.
            guard total > 0 else { return nil }
            let index = max(0, Int((p * Double(total)).rounded(.up)) - 1)
            return index < sorted.count ? sorted[index] : nil
        }
        allPairsP50 = rank(all, 0.5, of: outcomes.count)
        allPairsP90 = rank(all, 0.9, of: outcomes.count)
        allPairsP99 = rank(all, 0.99, of: outcomes.count)
        allPairsMax = failed == 0 ? all.last : nil
        let late = outcomes.compactMap(\.lateJoiner).map(seconds).sorted()
        if case .late = join {
            lateJoinerP50 = rank(late, 0.5, of: outcomes.count)
            lateJoinerP99 = rank(late, 0.99, of: outcomes.count)
            lateJoinerMax = late.count == outcomes.count ? late.last : nil
            let epochs = outcomes.compactMap(\.existingPairEpochs)
            existingPairEpochs = epochs.reduce(0, +)
            existingPairEpochsMaxPerTrial = epochs.max() ?? 0
        }
        if leave != .none {
            let leaves = outcomes.compactMap(\.leave)
            let closes = leaves.compactMap(\.closed).map(seconds).sorted()
            leaveCloseP50 = rank(closes, 0.5, of: leaves.count)
            leaveCloseP99 = rank(closes, 0.99, of: leaves.count)
            leaveCloseMax = closes.count == leaves.count ? closes.last : nil
            leaveNotClosed = leaves.count - closes.count
            let others = max(1, leaves.count * (members - 1))
            leaveClosedOnGoodbye = Double(leaves.reduce(0) { $0 + $1.closedOnGoodbye }) / Double(others)
            leaveUnfinished = leaves.count(where: { !$0.everyoneLeft })
            trialsWithRecordsLeft = leaves.count(where: { $0.recordsLeft > 0 })
            recordsLeft = leaves.reduce(0) { $0 + $1.recordsLeft }
        }
        let peers = outcomes.flatMap(\.peers)
        let n = Double(max(1, peers.count))
        fetchesPerPeer = Double(peers.reduce(0) { $0 + $1.requests.fetches }) / n
        savesPerPeer = Double(peers.reduce(0) { $0 + $1.requests.saves }) / n
        deletesPerPeer = Double(peers.reduce(0) { $0 + $1.requests.deletes }) / n
        lookupsPerPeer = Double(peers.reduce(0) { $0 + $1.requests.lookups }) / n
        requestsPerPeer = Double(peers.reduce(0) { $0 + $1.requests.total }) / n
        requestsPerCall = requestsPerPeer * Double(members)
        let records = peers.reduce(0) { $0 + $1.recordsFetched }
        recordsPerPeer = Double(records) / n
        kilobytesPerPeer = Double(peers.reduce(0) { $0 + $1.bytesFetched }) / n / 1000
        otherPairsShare = records == 0 ? 0 : Double(peers.reduce(0) { $0 + $1.otherPairRecords }) / Double(records)
        pushesPerDeviceMinute = peers.reduce(0) { $0 + $1.pushesPerMinute } / n
        abandonedEpochs = peers.reduce(0) { $0 + $1.epochsAbandoned }
        resets = peers.reduce(0) { $0 + $1.resets }
        throttled = peers.reduce(0) { $0 + $1.throttled }
    }
}

/// A group-call experiment's results.
public struct MeshReport: Sendable, Codable {
    public var rows: [MeshSummary]
    public var traceHash: String
    public var trials: Int
    public var events: Int
    public var cpuSeconds: Double

    /// One markdown table, the trace hash under it.
    public var markdown: String {
        func s(_ v: Double?) -> String { v.map { String(format: "%.2f s", $0) } ?? "–" }
        var lines = ["| strategy | push loss | members | join | p50 | p90 | p99 | max | failed | late joiner p50 / p99 / max "
                     + "| requests/peer (fetch, save, delete, lookup) | requests/call | records/peer | KB/peer "
                     + "| other pairs' share | pushes/device/min | abandoned epochs | resets | throttled |",
                     "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows {
            let late = r.join == "late" ? "\(s(r.lateJoinerP50)) / \(s(r.lateJoinerP99)) / \(s(r.lateJoinerMax))" : "–"
            lines.append("| \(r.strategy) | \(r.pushLoss) | \(r.members) | \(r.join) | \(s(r.allPairsP50)) "
                         + "| \(s(r.allPairsP90)) | \(s(r.allPairsP99)) | \(s(r.allPairsMax)) | \(r.failed)/\(r.trials) "
                         + "| \(late) | " + String(format: "%.1f (%.1f, %.1f, %.1f, %.1f) | %.1f | %.1f | %.1f | %.0f %% "
                                                      + "| %.2f", r.requestsPerPeer, r.fetchesPerPeer, r.savesPerPeer,
                                                      r.deletesPerPeer, r.lookupsPerPeer, r.requestsPerCall,
                                                      r.recordsPerPeer, r.kilobytesPerPeer, r.otherPairsShare * 100,
                                                      r.pushesPerDeviceMinute)
                         + " | \(r.abandonedEpochs) | \(r.resets) | \(r.throttled) |")
        }
        for r in rows {
            if let epochs = r.existingPairEpochs {
                let pairs = (r.members - 1) * (r.members - 2) / 2
                lines.append("")
                lines.append("\(r.strategy), push loss \(r.pushLoss): after the late join the \(pairs) pairs already "
                             + "connected started \(epochs) new epochs in \(r.trials) trials (at most "
                             + "\(r.existingPairEpochsMaxPerTrial ?? 0) in one trial).")
            }
            if r.leave != LeaveScenario.none.description {
                lines.append("")
                lines.append("\(r.strategy), push loss \(r.pushLoss), leave \(r.leave): the member's leaving → every "
                             + "other member ended its leg with it p50 / p99 / max \(s(r.leaveCloseP50)) / "
                             + "\(s(r.leaveCloseP99)) / \(s(r.leaveCloseMax)), not closed in "
                             + "\(r.leaveNotClosed ?? 0)/\(r.trials); "
                             + "\(Int(((r.leaveClosedOnGoodbye ?? 0) * 100).rounded())) % of those legs ended on its "
                             + "goodbye on the path; leaving unanswered in \(r.leaveUnfinished ?? 0); "
                             + "after everyone hung up, \(r.recordsLeft ?? 0) presence or signal records left in "
                             + "\(r.trialsWithRecordsLeft ?? 0) trials.")
            }
        }
        lines.append("")
        lines.append("trace hash: \(traceHash)")
        return lines.joined(separator: "\n")
    }
}

/// Runs group-call trials.
public enum MeshExperiment {
    /// Every strategy × push loss of `plan` (NATs are not used: members are on direct paths), `plan.trials`
    /// group calls of `members` joining by `join`, then leaving by `leave`. `progress` gets (trials done, trials in all).
    public static func run(_ plan: ExperimentPlan, members: Int, join: JoinSchedule, leave: LeaveScenario = .none,
                           progress: (Int, Int) -> Void = { _, _ in }) throws -> MeshReport {
        let cpuStart = CPUTime.now()
        var hash = RunTraceHash()
        var rows: [MeshSummary] = []
        var events = 0
        let cells = plan.strategies.flatMap { s in plan.pushLosses.map { (s, $0) } }
        let total = cells.count * plan.trials
        var done = 0
        for (strategy, loss) in cells {
            let configuration = try plan.trialConfiguration(ExperimentPlan.Cell(strategy: strategy, pushLoss: loss,
                                                                                nat: .both(nil)))
            var outcomes: [RoomTrialOutcome] = []
            for t in 0..<plan.trials {
                if done % 20 == 0 { progress(done, total) }
                var trial = try RoomTrial(configuration: configuration, members: members, join: join, leave: leave,
                                          index: t, seed: plan.trialSeed(t))
                let outcome = trial.run()
                hash.absorb(outcome.trace)
                events += outcome.events
                outcomes.append(outcome)
                done += 1
            }
            rows.append(MeshSummary(strategy: strategy, pushLoss: loss, members: members, join: join, leave: leave,
                                    outcomes: outcomes))
        }
        progress(total, total)
        return MeshReport(rows: rows, traceHash: hash.hex, trials: total, events: events,
                          cpuSeconds: CPUTime.now() - cpuStart)
    }
}
