// The experiment as a markdown table, one row per configuration, and a footer with the trace
// hash and the simulator's speed: what `zonertc sim converge` prints on stdout.
import Foundation

/// Renders an experiment report as markdown.
public enum MarkdownReport {
    /// The column headings, in order.
    public static let header = [
        "strategy", "push loss", "NAT", "p50", "p90", "p99", "max", "failed", "requests/call", "records/call",
        "KB/call", "stale drops/call", "duplicates/call", "resets/call", "first push p50", "first poll p50",
    ]

    /// The table alone. When summaries come from more than one source (simulated beside a real
    /// run's), a first column says which.
    public static func table(_ summaries: [ConvergenceSummary], deadline: Double) -> String {
        let mixed = Set(summaries.map(\.source)).count > 1
        let columns = (mixed ? ["source"] : []) + header
        var lines = ["| " + columns.joined(separator: " | ") + " |",
                     "|" + columns.map { name in ["source", "strategy", "NAT"].contains(name) ? "---" : "---:" }
                         .joined(separator: "|") + "|"]
        for s in summaries {
            let cells = (mixed ? [s.source] : []) + [
                s.strategy, number(s.pushLoss), s.nat, seconds(s.p50, deadline), seconds(s.p90, deadline),
                seconds(s.p99, deadline), seconds(s.max, deadline),
                "\(s.failures)/\(s.trials)", fixed(s.storeRequests, 1), fixed(s.recordsFetched, 1),
                fixed(s.bytesFetched / 1024, 1), fixed(s.staleDrops, 1), fixed(s.duplicates, 1), fixed(s.resets, 2),
                s.firstPushMedian.map { fixed($0, 2) + " s" } ?? "–",
                s.firstPollMedian.map { fixed($0, 2) + " s" } ?? "–",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// The table, what it measured and the footer.
    public static func render(_ report: ExperimentReport) -> String {
        let p = report.plan
        var out = "Convergence: call start → both peers connected on the same epoch. "
            + "\(p.trials) trials per configuration, seed \(p.seed), push profile \(p.profile), "
            + "store latency \(p.storeLatency), poll interval \(fixed(p.pollIntervalSeconds, 1)) s, "
            + "old epochs in the zone \(p.oldEpochs), deadline \(fixed(p.deadlineSeconds, 0)) s"
            + (p.holdSeconds > 0 ? ", calls followed \(fixed(p.holdSeconds, 0)) s after connecting" : "")
            + (p.relay ? ", TURN relay offered" : ", no relay")
            + ". Failed: not connected within the deadline (percentiles that fall among them show "
            + "\"> \(fixed(p.deadlineSeconds, 0)) s\").\n\n"
        out += table(report.configurations, deadline: p.deadlineSeconds)
        let relayed = report.configurations.reduce(0) { $0 + $1.relayed }
        if relayed > 0 { out += "\n\n\(relayed) calls connected through the relay." }
        out += "\n\ntrace hash: \(report.traceHash)\n"
        out += "speed: \(report.trials) trials in \(fixed(report.cpuSeconds, 2)) CPU s = "
            + "\(Int(report.trialsPerCPUSecond.rounded())) trials per CPU second "
            + "(\(report.events) events, \(fixed(report.wallSeconds, 2)) s wall)\n"
        return out
    }

    static func seconds(_ value: Double?, _ deadline: Double) -> String {
        guard let value else { return "> \(fixed(deadline, 0)) s" }
        return fixed(value, 2) + " s"
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(format: "%.0f", value) : String(format: "%g", value)
    }
}
