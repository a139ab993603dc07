import Foundation
import Synchronization
import ZoneCore

/// Carries notifications from the delivery model to the devices listening for them.
///
/// The model decides timing; the hub only holds listeners and, like APNs for an offline
/// device, keeps the last undelivered notification per device until it connects. With
/// `automatic` pumping a thread wakes at the model's deadlines on the wall clock; with manual
/// pumping (tests, simulator) the caller calls `pump(now:)` after moving its clock.
///
/// A device ID may also have a sink (`sink(deviceID:_:)`): it is handed every delivery to that
/// device ID, whoever's, as the delivery happens (the webcourier keeps each user's between a web
/// client's polls). Nothing is held for a device ID that has a sink.
///
/// Locks: nothing is yielded to a stream while `state` is held. A delivery collects under the
/// lock and yields after releasing it, because yielding resumes the listening task and so takes
/// that task's own lock; cancelling the task holds that lock while it runs the stream's
/// termination handler. The handler therefore takes only `departed`, a leaf lock under which
/// nothing else is taken, and the listener is dropped at the next delivery or listen.
public final class PushHub: Sendable {
    private typealias Continuation = AsyncStream<PushNotification>.Continuation
    /// Takes a delivery to a device ID with a sink: the user and the notification.
    public typealias Sink = @Sendable (_ user: String, _ note: PushNotification) -> Void

    private struct State: ~Copyable {
        var model: PushDeliveryModel
        var listeners: [String: [UInt64: Continuation]] = [:]
        var held: [String: PushNotification] = [:]
        var sinks: [String: (owner: ObjectIdentifier, sink: Sink)] = [:]
        var nextListener: UInt64 = 0
        var stopped = false

        mutating func drop(_ gone: [Departure]) {
            for g in gone {
                listeners[g.key]?[g.id] = nil
                if listeners[g.key]?.isEmpty == true { listeners[g.key] = nil }
            }
        }
    }

    private struct Departure: Sendable {
        var key: String
        var id: UInt64
    }

    private let state: Mutex<State>
    private let departed = Mutex<[Departure]>([])
    /// Keeps deliveries in order when two callers pump at once (the pump thread and a manual pump);
    /// only deliverers take it, and never while holding `state`.
    private let delivering = Mutex<Void>(())
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

    /// Streams listening now (those whose end was not yet noticed included).
    public var listenerCount: Int { state.withLock { $0.listeners.values.reduce(0) { $0 + $1.count } } }

    /// Hands notifications to the delivery model.
    public func submit(_ notes: [DeviceNotification]) {
        guard !notes.isEmpty else { return }
        let now = clock.now()
        state.withLock { s in for n in notes { s.model.handle(.submit(n), now: now) } }
        woken.store(true, ordering: .sequentiallyConsistent)
        // Taking the lock once orders this after the pump's check of `woken` (or before it); the
        // signal then goes out with the lock free, so the pump does not wake only to block on it.
        wake.lock(); wake.unlock()
        wake.signal()
    }

    /// A stream of the notifications delivered to one device, from now on.
    public func listen(user: String, deviceID: String) -> AsyncStream<PushNotification> {
        let key = "\(user)/\(deviceID)"
        let (stream, continuation) = AsyncStream<PushNotification>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let gone = takeDeparted()
        // A held notification is yielded before the stream is registered, outside the lock; if a
        // delivery held a newer one meanwhile, that one follows, so the device sees them in order.
        var id: UInt64?
        while id == nil {
            let held: PushNotification? = state.withLock { s in
                s.drop(gone)
                if let held = s.held.removeValue(forKey: key) { return held }
                s.nextListener += 1
                s.listeners[key, default: [:]][s.nextListener] = continuation
                id = s.nextListener
                return nil
            }
            if let held { continuation.yield(held) }
        }
        let departure = Departure(key: key, id: id!)
        continuation.onTermination = { [weak self] _ in
            self?.departed.withLock { $0.append(departure) }
        }
        return stream
    }

    /// Hands every later delivery to `deviceID` (any user's) to `sink`, synchronously within the
    /// delivery, never under this hub's lock. One sink per device ID: a newer owner's replaces an
    /// older's; nil removes the sink if it is still `owner`'s.
    public func sink(deviceID: String, owner: ObjectIdentifier, _ sink: Sink?) {
        state.withLock { s in
            if let sink {
                s.sinks[deviceID] = (owner, sink)
            } else if s.sinks[deviceID]?.owner == owner {
                s.sinks[deviceID] = nil
            }
        }
    }

    /// Delivers everything due at `now`; returns how many were delivered.
    @discardableResult
    public func pump(now: Instant) -> Int {
        delivering.withLock { _ in
            let gone = takeDeparted()
            let (due, sunk, count) = state.withLock { s -> ([(Continuation, PushNotification)],
                                                               [(Sink, String, PushNotification)], Int) in
                s.drop(gone)
                s.model.handle(.timer, now: now)
                var due: [(Continuation, PushNotification)] = []
                var sunk: [(Sink, String, PushNotification)] = []
                var count = 0
                while let d = s.model.pollOutput() {
                    count += 1
                    let key = "\(d.userRecordName)/\(d.deviceID)"
                    let sink = s.sinks[d.deviceID]?.sink
                    if let sink { sunk.append((sink, d.userRecordName, d.notification)) }
                    if let ls = s.listeners[key], !ls.isEmpty {
                        for c in ls.values { due.append((c, d.notification)) }
                    } else if sink == nil {
                        s.held[key] = d.notification
                    }
                }
                return (due, sunk, count)
            }
            for (sink, user, note) in sunk { sink(user, note) }
            for (c, note) in due { c.yield(note) }
            return count
        }
    }

    /// When the next delivery is due.
    public var nextDeadline: Instant? { state.withLock { $0.model.nextDeadline } }

    /// Ends every stream and the pump thread.
    public func stop() {
        let conts = state.withLock { s -> [Continuation] in
            s.stopped = true
            s.sinks = [:]
            defer { s.listeners = [:] }
            return s.listeners.values.flatMap { $0.values }
        }
        for c in conts { c.finish() }
        woken.store(true, ordering: .sequentiallyConsistent)
        wake.lock(); wake.signal(); wake.unlock()
    }

    private func takeDeparted() -> [Departure] {
        departed.withLock { d in
            defer { d.removeAll() }
            return d
        }
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
            state.withLock { $0.drop(takeDeparted()) }
            wake.lock()
            if !woken.exchange(false, ordering: .sequentiallyConsistent) {
                let wait = deadline.map { ($0 - now).seconds } ?? 1.0
                _ = wake.wait(until: Date(timeIntervalSinceNow: min(max(wait, 0), 1.0)))
            }
            wake.unlock()
        }
    }
}
