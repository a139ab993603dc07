import Foundation

/// How a run of the suites is made: a measurement, or a smoke run (`--quick`, or ZONERTC_BENCH_QUICK=1
/// as Bench/common.sh sets it) that only checks the documented commands still work — every duration
/// and count cut down, its figures meaningless (Tests/CLITests/DocumentedCommandsTests.swift).
enum BenchRun {
    static let quick = CommandLine.arguments.contains("--quick")
        || ProcessInfo.processInfo.environment["ZONERTC_BENCH_QUICK"] == "1"

    /// `full` seconds of measuring, or a tenth of a second in a smoke run.
    static func seconds(_ full: Double) -> Double { quick ? min(full, 0.1) : full }

    /// `full` repetitions, or a hundredth of them (at least `minimum`) in a smoke run.
    static func count(_ full: Int, minimum: Int = 2) -> Int { quick ? max(minimum, full / 100) : full }

    /// The CPU, cores, date and load this run measures on: a figure is comparable only with one from
    /// the same CPU (Bench/common.sh prints the same line for the scripts).
    static var machine: String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let load = ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores; \(formatter.string(from: Date()));"
            + " load average \(load)" + (quick ? "; quick run: the figures mean nothing" : "")
    }
}
