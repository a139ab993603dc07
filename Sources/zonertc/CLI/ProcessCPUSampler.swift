import Foundation
import ZoneCore

/// Another process's CPU time (`/proc/PID/task/TID/schedstat`: nanoseconds on a CPU, summed over its
/// threads), sampled every few milliseconds from `start()` to `stop()`, so that what it spent up to a moment
/// known only later (a group call's last first frame, reported at the members' exit) can be read afterwards.
/// It measures a window whose processes compete for the cores, so a sample is kept cheap: one `read` of a
/// small file per thread, the threads listed at `start()` (the daemon's loop and worker pool live as long as
/// it does; one started later is not counted). The sampler never outlives `stop()` plus one period.
final class ProcessCPUSampler: @unchecked Sendable {
    private let directory: String
    private let lock = NSLock()
    private var files: [String] = []
    /// (wall ms since 1970, CPU ms), in time order.
    private var samples: [(wallMs: Double, cpuMs: Double)] = []
    private var task: Task<Void, Never>?
    static let period: Duration = .milliseconds(5)
    /// At most this many samples (a minute at the period): bounded whatever the caller does.
    static let limit = 12_000

    init(pid: Int32) { directory = "/proc/\(pid)/task" }

    func start() {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        lock.withLock { files = threads.map { "\(directory)/\($0)/schedstat" } }
        sample()
        task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.period)
                guard let self, self.sample() else { return }
            }
        }
    }

    func stop() {
        task?.cancel()
        sample()
    }

    /// CPU ms from `start()` until the first sample at or after `wallMs` (nil without one).
    func used(untilWallMs wallMs: Double) -> Double? {
        lock.withLock {
            guard let first = samples.first, let end = samples.first(where: { $0.wallMs >= wallMs }) else { return nil }
            return end.cpuMs - first.cpuMs
        }
    }

    /// Takes one sample; false once the process is gone or the bound is reached.
    @discardableResult
    private func sample() -> Bool {
        let paths = lock.withLock { files }
        var ns = 0.0, read = 0
        for path in paths {
            guard let value = Self.leadingNumber(path) else { continue }
            ns += value
            read += 1
        }
        guard read > 0 else { return false }
        let wall = Double(WallClock().now().nanosecondsSinceEpoch) / 1e6
        return lock.withLock {
            guard samples.count < Self.limit else { return false }
            samples.append((wall, ns / 1e6))
            return true
        }
    }

    /// The decimal number a small file begins with (nil when it cannot be read).
    private static func leadingNumber(_ path: String) -> Double? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let count = withUnsafeMutableBytes(of: &buffer) { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return withUnsafeBytes(of: &buffer) { bytes -> Double? in
            var value = 0.0, digits = 0
            for byte in bytes.prefix(count) {
                guard (0x30...0x39).contains(byte) else { break }
                value = value * 10 + Double(byte - 0x30)
                digits += 1
            }
            return digits > 0 ? value : nil
        }
    }
}
