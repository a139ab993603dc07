import Foundation
import Glibc

/// CPU time used by this process and by the PostgreSQL server's processes, read from /proc, so a
/// bench can say what a request costs in CPU whatever else the machine runs. A server process that
/// exits is counted through its parent's `cutime`/`cstime` once the postmaster has reaped it, so a
/// difference of two readings covers backends that came and went between them.
struct ProcessCPU {
    var selfNanos: UInt64
    var serverNanos: UInt64

    /// User and system CPU time of this process so far, in nanoseconds (microsecond resolution).
    static func selfNanoseconds() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return UInt64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000_000
            + UInt64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1_000
    }

    static func read(serverCommand: String = "postgres") -> ProcessCPU {
        let mine = selfNanoseconds()
        let tick = UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        var server: UInt64 = 0
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for pid in entries where pid.first?.isNumber == true {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                  stat[stat.index(after: open)..<close] == serverCommand else { continue }
            // Fields after the command: state is field 3; utime, stime, cutime, cstime are 14–17.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 14 else { continue }
            let ticks = fields[11...14].reduce(UInt64(0)) { $0 &+ (UInt64($1) ?? 0) }
            server &+= ticks &* (1_000_000_000 / tick)
        }
        return ProcessCPU(selfNanos: mine, serverNanos: server)
    }

    /// Microseconds of CPU per operation between `before` and now: (this process, the server).
    func perOperation(since before: ProcessCPU, operations: Int) -> (selfMicros: Double, serverMicros: Double) {
        let n = Double(max(operations, 1))
        return (Double(selfNanos &- before.selfNanos) / 1e3 / n, Double(serverNanos &- before.serverNanos) / 1e3 / n)
    }
}
