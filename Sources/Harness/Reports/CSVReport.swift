// The experiment as CSV (RFC 4180: comma-separated, a header row, fields quoted when they hold
// a comma or a quote): one row per configuration, times in milliseconds, empty when a
// percentile falls among the calls that did not converge.
import Foundation

/// Renders an experiment report as CSV.
public enum CSVReport {
    public static let header = [
        "source", "strategy", "push_loss", "nat", "trials", "converged", "failures", "p50_ms", "p90_ms", "p99_ms",
        "max_ms", "requests_per_call", "records_per_call", "bytes_per_call", "stale_drops_per_call",
        "duplicates_per_call", "resets_per_call", "calls_with_resets", "first_push_p50_ms", "first_poll_p50_ms",
        "relayed",
    ]

    public static func render(_ summaries: [ConvergenceSummary]) -> String {
        var rows = [header.joined(separator: ",")]
        for s in summaries {
            let fields: [String] = [
                s.source, s.strategy, "\(s.pushLoss)", s.nat, "\(s.trials)", "\(s.converged)", "\(s.failures)",
                ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max), decimal(s.storeRequests), decimal(s.recordsFetched),
                decimal(s.bytesFetched), decimal(s.staleDrops), decimal(s.duplicates), decimal(s.resets),
                "\(s.callsWithResets)", ms(s.firstPushMedian), ms(s.firstPollMedian), "\(s.relayed)",
            ]
            rows.append(fields.map(quoted).joined(separator: ","))
        }
        return rows.joined(separator: "\n") + "\n"
    }

    static func ms(_ seconds: Double?) -> String {
        seconds.map { String(format: "%.1f", $0 * 1000) } ?? ""
    }

    static func decimal(_ value: Double) -> String { String(format: "%.3f", value) }

    static func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
