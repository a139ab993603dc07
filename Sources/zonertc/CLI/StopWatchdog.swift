import Foundation
import Glibc
import ZoneCore

/// Ends the process if a shutdown takes longer than `limit`: a daemon told to stop must stop
/// within a bound, whatever it waits for (a peer, a lock, a stalled output).
final class StopWatchdog: Sendable {
    private let disarmed = DispatchSemaphore(value: 0)

    init(limit: Duration, what: String) {
        let seconds = Double(limit.nanoseconds) / 1e9
        let thread = Thread { [disarmed] in
            guard disarmed.wait(timeout: .now() + seconds) == .timedOut else { return }
            let text = "\(what): did not stop within \(Int(seconds)) s; exiting\n"
            // Non-blocking: a full standard error must not hold the exit either.
            _ = fcntl(STDERR_FILENO, F_SETFL, fcntl(STDERR_FILENO, F_GETFL) | O_NONBLOCK)
            _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(1)
        }
        thread.name = "zonertc-stop-watchdog"
        thread.start()
    }

    /// The shutdown finished: the process goes on to exit normally.
    func disarm() { disarmed.signal() }
}

/// The process's open-file limit.
enum FileLimit {
    /// Raises the soft limit to the hard one; returns the limit now in force.
    @discardableResult
    static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
