import Foundation
import Synchronization
import ZoneCore

/// Carries notifications from the delivery model to the devices listening for them.
///
/// The model decides timing; the hub only holds listeners and, like APNs for an offline
/// device, keeps the last undelivered notification per device until it connects. With
/// `automatic` pumping a thread wakes at the model's deadlines on the wall clock; with manual
/// pumping (tests, simulator) the caller calls `pump(now:)` after moving its clock.
public final class PushHub: Sendable {
    private struct State: ~Copyable {
        var model: PushDeliveryModel
        var listeners: [String: [UInt64: AsyncStream<PushNotification>.Continuation]] = [:]
        var held: [String: PushNotification] = [:]
        var nextListener: UInt64 = 0
        var stopped = false
    }

    private let state: Mutex<State>
    private let wake = NSCondition()
    /// Set before signalling `wake`, so a submit between the pump's look and its wait is not missed.
    private let woken = Atomic<Bool>(false)
    private let clock: any InstantSource

    public init(profile: PushProfile, seed: UInt64, clock: any InstantSource, automatic: Bool) {
        state = Mutex(State(model: PushDeliveryModel(profile: profile, seed: seed)))
        self.clock = clock
        if automatic {
            let t = Thread { [self] in self.pumpLoop() }
            t.name = "zonertc-push"
            t.start()
        }
    }

    public var profile: PushProfile { state.withLock { $0.model.profile } }
    public var counters: PushDeliveryModel.Counters { state.withLock { $0.model.counters } }

    /// Hands notifications to the delivery model.
    public func submit(_ notes: [DeviceNotification]) {
        guard !notes.isEmpty else { return }
        let now = clock.now()
        state.withLock { s in for n in notes { s.model.handle(.submit(n), now: now) } }
        woken.store(true, ordering: .sequentiallyConsistent)
        wake.lock(); wake.signal(); wake.unlock()
    }

    /// A stream of the notifications delivered to one device, from now on.
    public func listen(user: String, deviceID: String) -> AsyncStream<PushNotification> {
        let key = "\(user)/\(deviceID)"
        let (stream, continuation) = AsyncStream<PushNotification>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id: UInt64 = state.withLock { s in
            s.nextListener += 1
            s.listeners[key, default: [:]][s.nextListener] = continuation
            if let held = s.held.removeValue(forKey: key) { continuation.yield(held) }
            return s.nextListener
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { s in
                s.listeners[key]?[id] = nil
                if s.listeners[key]?.isEmpty == true { s.listeners[key] = nil }
            }
        }
        return stream
    }

    /// Delivers everything due at `now`; returns how many were delivered.
    @discardableResult
    public func pump(now: Instant) -> Int {
        state.withLock { s in
            s.model.handle(.timer, now: now)
            var delivered = 0
            while let d = s.model.pollOutput() {
                delivered += 1
                let key = "\(d.userRecordName)/\(d.deviceID)"
                if let ls = s.listeners[key], !ls.isEmpty {
                    for c in ls.values { c.yield(d.notification) }
                } else {
                    s.held[key] = d.notification
                }
            }
            return delivered
        }
    }

    /// When the next delivery is due.
    public var nextDeadline: Instant? { state.withLock { $0.model.nextDeadline } }

    /// Ends every stream and the pump thread.
    public func stop() {
        let conts = state.withLock { s -> [AsyncStream<PushNotification>.Continuation] in
            s.stopped = true
            defer { s.listeners = [:] }
            return s.listeners.values.flatMap { $0.values }
        }
        for c in conts { c.finish() }
        woken.store(true, ordering: .sequentiallyConsistent)
        wake.lock(); wake.signal(); wake.unlock()
    }

    private func pumpLoop() {
        while true {
            woken.store(false, ordering: .sequentiallyConsistent)
            let (stopped, deadline) = state.withLock { ($0.stopped, $0.model.nextDeadline) }
            if stopped { return }
            let now = clock.now()
            if let deadline, deadline <= now {
                pump(now: now)
                continue
            }
            wake.lock()
            if !woken.exchange(false, ordering: .sequentiallyConsistent) {
                let wait = deadline.map { ($0 - now).seconds } ?? 1.0
                _ = wake.wait(until: Date(timeIntervalSinceNow: min(max(wait, 0), 1.0)))
            }
            wake.unlock()
        }
    }
}
