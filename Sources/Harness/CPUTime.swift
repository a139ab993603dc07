// Process CPU time, for "trials per CPU second": what the simulator costs, whatever else the
// machine is doing (wall time on a shared machine says little).
import Foundation

/// CPU seconds this process has used (user + system, every thread).
public enum CPUTime {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
