import Foundation
import Synchronization

/// Runs `body` on a thread of its own and reports whether it returned within `limit`.
///
/// For work that might hang (a deadlock under test): the test fails at the deadline instead of
/// hanging the suite. A body still running then is left to its thread, since nothing can end a
/// thread from outside; the test process ends it when it exits.
public func finishes(within limit: Duration, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let answered = Mutex(false)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        @Sendable func answer(_ value: Bool) {
            let first = answered.withLock { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: value) }
        }
        let thread = Thread {
            body()
            answer(true)
        }
        thread.stackSize = 4 << 20
        thread.start()
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { answer(false) }
    }
}
