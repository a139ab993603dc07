import Foundation
import ZoneCore

/// Threads of our own: for blocking calls (`blockingIO`: a socket's `connect`, a file's `fdatasync`),
/// so a waiting call never occupies a thread of Swift concurrency's cooperative pool (or Dispatch's,
/// which shares its root queue on Linux), and as the executor of the daemon's requests
/// (`Task(executorPreference:)`), so they never run on its event loop nor wait for that shared pool.
/// Threads start when work finds none idle (up to `maxThreads`) and end after two idle seconds, so a
/// finished process or a stopped daemon is not kept alive by them.
public final class ThreadPool: TaskExecutor, @unchecked Sendable {
    /// For blocking system calls.
    static let blockingIO = ThreadPool(maxThreads: 64, name: "zonertc-io")

    /// A job of Swift concurrency is queued as it comes: wrapped in a closure it took a heap allocation
    /// at every executor hop, several per request.
    private enum Work {
        case job(UnownedJob)
        case closure(() -> Void)
    }

    private let condition = NSCondition()
    /// Waiting work, oldest first.
    private var jobs = OutputQueue<Work>()
    private var idle = 0
    /// Signals sent to idle threads that they have not woken up for yet.
    private var wakes = 0
    private var threads = 0
    public let maxThreads: Int
    public let name: String

    /// A pool of at most `maxThreads` (at least 1) threads named `name`.
    public init(maxThreads: Int, name: String) {
        self.maxThreads = max(1, maxThreads)
        self.name = name
    }

    /// Runs `job` on a pool thread.
    public func run(_ job: @escaping @Sendable () -> Void) {
        submit(.closure(job))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    private func submit(_ work: Work) {
        condition.lock()
        jobs.append(work)
        // An idle thread that was signalled stays counted as idle until it runs again: a burst of jobs
        // must not count it once per job, or they would queue behind one thread while others could start.
        var wake = false
        var start = false
        if idle > wakes {
            wakes += 1
            wake = true
        } else if threads < maxThreads {
            threads += 1
            start = true
        }
        condition.unlock()
        // Signalled once the lock is free: a thread woken while it is held only blocks on it again, and
        // every request paid that twice (two more futex calls and a context switch each time).
        if wake { condition.signal() }
        if start {
            let t = Thread { [self] in self.work() }
            t.name = name
            t.start()
        }
    }

    /// Idle threads end after this long.
    private let idleLifetime: TimeInterval = 2

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                idle += 1
                let woke = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
                idle -= 1
                if wakes > 0 { wakes -= 1 }
                if !woke && jobs.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            guard let work = jobs.pop() else { continue }
            condition.unlock()
            switch work {
            case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            case .closure(let run): run()
            }
            condition.lock()
        }
    }
}
