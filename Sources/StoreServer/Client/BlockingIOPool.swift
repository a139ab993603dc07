import Foundation

/// Threads of our own for blocking socket calls, so a waiting `recv` never occupies a thread of
/// Swift concurrency's cooperative pool (or Dispatch's, which shares its root queue on Linux):
/// an in-process daemon answering on that pool would otherwise starve.
final class BlockingIOPool: @unchecked Sendable {
    static let shared = BlockingIOPool(maxThreads: 64)

    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var idle = 0
    private var threads = 0
    private let maxThreads: Int

    init(maxThreads: Int) { self.maxThreads = maxThreads }

    /// Runs `job` on a pool thread; a new thread starts when none is idle (up to the maximum).
    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        if idle == 0 && threads < maxThreads {
            threads += 1
            let t = Thread { [self] in self.work() }
            t.name = "zonertc-io"
            t.start()
        } else {
            condition.signal()
        }
        condition.unlock()
    }

    /// Idle threads end after this long, so a finished process is not kept alive by them.
    private let idleLifetime: TimeInterval = 2

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                idle += 1
                let woke = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
                idle -= 1
                if !woke && jobs.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
            condition.lock()
        }
    }
}
