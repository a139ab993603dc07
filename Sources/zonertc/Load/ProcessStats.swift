import Foundation

/// What /proc says of a process: resident memory, open descriptors, CPU time.
struct ProcessStats: Codable, Sendable {
    var rssBytes: Int
    var fds: Int
    var cpuSeconds: Double

    /// nil when the process is gone (or not ours to read).
    static func read(pid: Int32) -> ProcessStats? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        var rss = 0
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            rss = (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
        // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
        var cpu = 0.0
        if let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                cpu = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
            }
        }
        return ProcessStats(rssBytes: rss, fds: fds, cpuSeconds: cpu)
    }

    /// Several daemons' figures added up.
    static func sum(_ all: [ProcessStats]) -> ProcessStats {
        ProcessStats(rssBytes: all.reduce(0) { $0 + $1.rssBytes }, fds: all.reduce(0) { $0 + $1.fds },
                     cpuSeconds: all.reduce(0) { $0 + $1.cpuSeconds })
    }
}

/// The processor's model name, as `lscpu` prints it, for figures.
func cpuModelName() -> String {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
    for line in info.split(separator: "\n") where line.hasPrefix("model name") {
        return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }
    return "unknown"
}
