import CSystem
import Foundation
import Synchronization
import ZoneCore

/// A single-threaded event loop on epoll: file-descriptor readiness, timers and work posted
/// from other threads. It moves bytes and time; it holds no protocol logic.
///
/// Everything registered runs on the loop's thread. `execute(_:)` and `stop()` may be called
/// from anywhere; every other method only from the loop's thread (handlers and timers).
public final class EventLoop: @unchecked Sendable {
    /// Readiness reported to a handler.
    public struct Readiness: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = Readiness(rawValue: CS_EPOLLIN)
        public static let writable = Readiness(rawValue: CS_EPOLLOUT)
        public static let error = Readiness(rawValue: CS_EPOLLERR)
        public static let hangup = Readiness(rawValue: CS_EPOLLHUP | CS_EPOLLRDHUP)
    }

    /// A scheduled timer, for cancelling it.
    public struct Timer: Hashable, Sendable { let id: UInt64 }

    public let name: String
    public let clock: any InstantSource
    private let epfd: Int32
    private let wakeFD: Int32
    /// Work posted from any thread, and whether the loop was woken for it since it last took it: a
    /// burst of posts costs one `eventfd` write, not one each.
    private let posted = Mutex<(work: [@Sendable () -> Void], woken: Bool)>(([], false))
    private let stopping = Atomic<Bool>(false)
    private var threadID: pthread_t?
    // Loop-confined state.
    private var handlers: [Int32: (Readiness) -> Void] = [:]
    /// Where connections on this loop read into, one at a time (`read(_:)`): loop-confined scratch
    /// space, made at the first read. Not a `lazy var`: a lazy property is mutated through a copy of
    /// its value (get, change, set back), so every read allocated and copied all 64 KB of it.
    public private(set) var readBuffer: [UInt8] = []
    private var timerHeap = DeadlineHeap()
    private var timerWork: [UInt64: (due: Instant, work: () -> Void)] = [:]
    private var nextTimer: UInt64 = 0
    private var finished: [() -> Void] = []
    /// What `pauseBeforeNextWait(_:)` asked for in this iteration.
    private var pauseBeforeWait: Duration = .zero
    /// Whether the pause this iteration began with found anything ready, until taken.
    private var pauseOutcome: Bool?
    /// Pauses asked for (`pauseBeforeNextWait(_:)`), each counted once, when its iteration first
    /// asks for it: the loop takes it before its next wait.
    public private(set) var pausesTaken = 0

    /// The longest pause `pauseBeforeNextWait(_:)` takes.
    public static let maxPauseBeforeWait: Duration = .milliseconds(10)

    public init(name: String, clock: any InstantSource = WallClock()) throws {
        self.name = name
        self.clock = clock
        epfd = cs_epoll_create()
        guard epfd >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = cs_eventfd()
        guard wakeFD >= 0 else { throw SocketError("eventfd") }
        guard cs_epoll_add(epfd, wakeFD, CS_EPOLLIN, UInt64(wakeFD)) == 0 else { throw SocketError("epoll_ctl") }
    }

    deinit {
        close(epfd)
        close(wakeFD)
    }

    /// Runs the loop on a new thread.
    public func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = name
        thread.start()
    }

    /// The loop whose thread the caller is on, if any: code running as a loop's task (`Task(executorPreference:)`)
    /// can do its own I/O on that loop instead of handing it to another thread and back.
    public static var current: EventLoop? {
        guard let loop = pthread_getspecific(currentKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(loop).takeUnretainedValue()
    }

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Whether the loop was told to stop: work posted to it from now on may never run.
    public var isStopping: Bool { stopping.load(ordering: .sequentiallyConsistent) }

    /// `read(2)` from `fd` into `readBuffer`, on the loop's thread: what came is `readBuffer[0..<n]`.
    public func read(_ fd: Int32) -> Int {
        if readBuffer.isEmpty { readBuffer = [UInt8](repeating: 0, count: 65536) }
        return readBuffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    }

    /// Whether the caller is on the loop's thread.
    public var inLoop: Bool {
        guard let t = threadID else { return false }
        return pthread_equal(t, pthread_self()) != 0
    }

    /// Runs `work` on the loop's thread, soon. Safe from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        let wake = posted.withLock { p -> Bool in
            p.work.append(work)
            defer { p.woken = true }
            return !p.woken
        }
        if wake { _ = cs_eventfd_signal(wakeFD) }
    }

    /// Ends the loop after the current iteration; `onStop` handlers then run on its thread.
    public func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        _ = cs_eventfd_signal(wakeFD)
    }

    /// Registers `fd` for `interest`; `handler` is called with what is ready.
    public func register(_ fd: Int32, interest: Readiness, handler: @escaping (Readiness) -> Void) throws {
        guard cs_epoll_add(epfd, fd, interest.rawValue | CS_EPOLLRDHUP, UInt64(fd)) == 0 else {
            throw SocketError("epoll_ctl(ADD)")
        }
        handlers[fd] = handler
    }

    /// Changes what `fd` is watched for. `watchHangup: false` stops the peer's half-close being
    /// reported (it stays true, so after it has been handled it would wake the loop forever).
    public func setInterest(_ fd: Int32, _ interest: Readiness, watchHangup: Bool = true) {
        _ = cs_epoll_modify(epfd, fd, interest.rawValue | (watchHangup ? CS_EPOLLRDHUP : 0), UInt64(fd))
    }

    /// Stops watching `fd` (the caller closes it).
    public func deregister(_ fd: Int32) {
        _ = cs_epoll_remove(epfd, fd)
        handlers[fd] = nil
    }

    /// Runs `work` on the loop at `instant` (or at once if it has passed).
    @discardableResult
    public func schedule(at instant: Instant, _ work: @escaping () -> Void) -> Timer {
        nextTimer += 1
        timerWork[nextTimer] = (instant, work)
        timerHeap.push(due: instant, id: nextTimer)
        // Cancelled timers stay in the heap until due; rebuild it when they outnumber the live ones,
        // so rescheduling a timer per request keeps the heap the size of the live timers.
        if timerHeap.count > 1024 && timerHeap.count > 2 * timerWork.count {
            var live = DeadlineHeap()
            for (id, timer) in timerWork { live.push(due: timer.due, id: id) }
            timerHeap = live
        }
        return Timer(id: nextTimer)
    }

    public func cancel(_ timer: Timer) { timerWork[timer.id] = nil }

    /// Asks the loop to rest `pause` (at most `maxPauseBeforeWait`) before it next asks the kernel what
    /// is ready, once. What arrives meanwhile is then read in one pass, so a busy socket costs fewer
    /// system calls and wake-ups per datagram than a pass per arrival: interrupt moderation (a NIC's
    /// rx-usecs), in user space. Posted work and timers wait as long. The longest request of an
    /// iteration wins. Only from the loop's thread.
    public func pauseBeforeNextWait(_ pause: Duration) {
        guard pause > .zero else { return }
        if pauseBeforeWait == .zero { pausesTaken += 1 }
        pauseBeforeWait = max(pauseBeforeWait, min(pause, Self.maxPauseBeforeWait))
    }

    /// Whether the pause this iteration began with found anything ready when it ended; nil when it
    /// began without one, or once taken: a pause is judged once, however many handlers then run.
    /// A handler can stop asking for pauses that gather nothing (the next events come later than
    /// the pause, whatever it waits).
    public func takePauseOutcome() -> Bool? {
        defer { pauseOutcome = nil }
        return pauseOutcome
    }

    /// Work to run on the loop's thread when it stops (closing sockets, final reports).
    public func onStop(_ work: @escaping () -> Void) { finished.append(work) }

    // MARK: The loop

    private func run() {
        threadID = pthread_self()
        // The thread holds the loop until `run` returns, so the unretained pointer stays valid.
        pthread_setspecific(Self.currentKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.currentKey, nil) }
        var events = [cs_event](repeating: cs_event(), count: 128)
        while !stopping.load(ordering: .sequentiallyConsistent) {
            var n: Int32 = 0
            pauseOutcome = nil
            if pauseBeforeWait > .zero {
                var rest = timespec(tv_sec: 0, tv_nsec: Int(pauseBeforeWait.nanoseconds))
                pauseBeforeWait = .zero
                _ = nanosleep(&rest, nil)  // a signal cutting it short only shortens the pause
                n = events.withUnsafeMutableBufferPointer { cs_epoll_wait(epfd, $0.baseAddress, 128, 0) }
                pauseOutcome = n > 0
            }
            if n <= 0 {
                let timeout = nextTimeoutMilliseconds()
                n = events.withUnsafeMutableBufferPointer { cs_epoll_wait(epfd, $0.baseAddress, 128, timeout) }
            }
            if n > 0 {
                for i in 0..<Int(n) {
                    let fd = Int32(truncatingIfNeeded: events[i].token)
                    if fd == wakeFD {
                        _ = cs_eventfd_drain(wakeFD)
                        continue
                    }
                    handlers[fd]?(Readiness(rawValue: events[i].events))
                }
            }
            runPosted()
            runTimers()
        }
        runPosted()
        for work in finished { work() }
        finished.removeAll()
    }

    private func runPosted() {
        let work = posted.withLock { p -> [@Sendable () -> Void] in
            defer {
                p.work.removeAll(keepingCapacity: true)
                p.woken = false
            }
            return p.work
        }
        for w in work { w() }
    }

    private func runTimers() {
        let now = clock.now()
        while let top = timerHeap.min, top.due <= now {
            timerHeap.popMin()
            if let timer = timerWork.removeValue(forKey: top.id) { timer.work() }
        }
    }

    private func nextTimeoutMilliseconds() -> Int32 {
        while let top = timerHeap.min, timerWork[top.id] == nil { timerHeap.popMin() }
        guard let top = timerHeap.min else { return 1000 }
        let ms = (top.due - clock.now()).nanoseconds / 1_000_000
        return Int32(clamping: max(0, min(ms + 1, 1000)))
    }
}

/// The loop as a task executor: tasks started with `Task(executorPreference: loop)` run their
/// non-isolated code on the loop's thread, so a daemon never waits for threads of the shared
/// cooperative pool that its host process may be blocking.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { [self] in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
