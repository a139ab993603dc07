// Push notifications collected for a test driver that polls for them: a task drains the client's
// notification stream into a queue the driver empties at each step.
import RecordStore
import Synchronization

/// Collects a device's push notifications until the driver takes them.
public final class NotificationMailbox: Sendable {
    private struct State {
        var queue: [PushNotification] = []
        var received = 0
    }

    private let state = Mutex(State())
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    public init() {}

    /// Starts collecting from `stream` (the stream of `StoreClient.notifications()`).
    public func collect(_ stream: AsyncStream<PushNotification>) {
        let task = Task { [weak self] in
            for await note in stream {
                guard let self else { return }
                self.state.withLock { s in
                    s.queue.append(note)
                    s.received += 1
                }
            }
        }
        consumer.withLock { $0 = task }
    }

    /// The notifications received since the last call, oldest first.
    public func drain() -> [PushNotification] {
        state.withLock { s in
            defer { s.queue = [] }
            return s.queue
        }
    }

    /// How many notifications have arrived in all (tests wait for deliveries to land).
    public var received: Int { state.withLock { $0.received } }

    /// Stops collecting.
    public func stop() {
        consumer.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    deinit { consumer.withLock { $0?.cancel() } }
}
