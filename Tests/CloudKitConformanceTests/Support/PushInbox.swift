// The notifications a push stream delivered, taken one at a time with a bounded wait: a missing
// notification fails the test at the deadline instead of hanging the suite.
import Foundation
import RecordStore
import Synchronization

final class PushInbox: Sendable {
    private typealias Waiter = CheckedContinuation<PushNotification?, Never>

    private struct State {
        var queued: [PushNotification] = []
        var waiter: (id: UInt64, continuation: Waiter)?
        var nextWaiter: UInt64 = 0
    }

    /// The state, in a box of its own so the reading task can hold it before `self` exists.
    private final class Shared: Sendable {
        let lock = Mutex(State())
    }

    private let shared = Shared()
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<PushNotification>) {
        let shared = self.shared
        reader = Task {
            for await note in stream {
                let waiter = shared.lock.withLock { s -> Waiter? in
                    guard let w = s.waiter else { s.queued.append(note); return nil }
                    s.waiter = nil
                    return w.continuation
                }
                waiter?.resume(returning: note)
            }
        }
    }

    deinit { reader.cancel() }

    /// The oldest notification not taken yet, waiting up to `limit` for one; nil when none came.
    func next(within limit: Duration = .seconds(10)) async -> PushNotification? {
        await withCheckedContinuation { (continuation: Waiter) in
            let id: UInt64? = shared.lock.withLock { s in
                if !s.queued.isEmpty {
                    continuation.resume(returning: s.queued.removeFirst())
                    return nil
                }
                s.nextWaiter += 1
                s.waiter = (s.nextWaiter, continuation)
                return s.nextWaiter
            }
            guard let id else { return }
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [shared] in
                let expired = shared.lock.withLock { s -> Waiter? in
                    guard let w = s.waiter, w.id == id else { return nil }
                    s.waiter = nil
                    return w.continuation
                }
                expired?.resume(returning: nil)
            }
        }
    }
}
