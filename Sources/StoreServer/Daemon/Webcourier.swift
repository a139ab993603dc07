import Foundation
import RecordStore
import Synchronization
import ZoneCore

/// Push for web clients: the APNs tokens of `tokens/create` and `tokens/register`, and the long-poll
/// on each token's `webcourierURL`.
///
/// CloudKit Web Services Reference, "Creating APNs Tokens (tokens/create)" (CreateTokens.html) and
/// "Registering Tokens (tokens/register)" (RegisterTokens.html): a web client gets a token and the URL
/// to long-poll for notifications, then registers the token. Here a registered token is a device of
/// its user in the store, so the store's subscriptions fire to it as to any peer's device, through the
/// same push delivery model (and its profile's delay); a listener per token collects what is
/// delivered, and a GET on the URL takes the oldest, or waits up to `timeout` and answers empty.
///
/// Nothing waits on a thread: a poll is a suspended task, resumed by a delivery or its timer. Locks
/// (the deadlock rule of the daemon): a continuation is resumed and a task cancelled only after
/// `state` is released, and nothing else is taken while it is held.
public final class Webcourier: Sendable {
    /// Limits of the long-poll.
    public struct Options: Sendable {
        /// How long a poll waits for a notification before it answers empty (the client polls again).
        public var timeout: Duration = .seconds(30)
        /// Notifications kept per token between polls; past it the oldest is dropped (a notification
        /// is a hint to fetch changes, and the newest says as much).
        public var maxQueued = 64
        /// Tokens one user may hold; creating one more forgets that user's oldest.
        public var maxTokensPerUser = 16

        public init() {}
    }

    /// Where tokens are polled: `GET /webcourier?tok=TOKEN`. The token is in the query, which is
    /// never logged, not in the path, which is.
    public static let path = "/webcourier"

    /// The store device of every web token of a user: one device, whose deliveries each token's
    /// listener receives, so a user's tokens never use up the store's devices per user.
    public static let deviceID = "webcourier"

    /// What a poll comes to.
    public enum PollResult: Sendable {
        /// No such token (or one forgotten): nothing says whether it ever existed.
        case unknown
        /// The caller signed in as another user than the token's.
        case forbidden
        /// `tokens/register` was not called for it yet.
        case notRegistered
        /// The oldest notification waiting, and the token's user and container.
        case notification(PushNotification, user: String, container: String)
        /// Nothing within the timeout (or a newer poll of the same token took over).
        case empty
    }

    /// A created token, as `tokens/register` finds it.
    public struct Registration: Sendable {
        public var user: String
        public var deviceID: String
        /// Whether it was registered before this call.
        public var already: Bool
    }

    private typealias Waiter = CheckedContinuation<PushNotification?, Never>

    private struct Courier {
        let user: String
        let deviceID: String
        let environment: String
        let container: String
        let created: UInt64
        var registered = false
        var queued = OutputQueue<PushNotification>()
        var waiter: (id: UInt64, continuation: Waiter, timer: Task<Void, Never>?)?
        var listener: Task<Void, Never>?
    }

    private struct State {
        var couriers: [String: Courier] = [:]
        var next: UInt64 = 0
        var dropped = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let push: PushHub
    public let options: Options

    public init(push: PushHub, options: Options = Options()) {
        self.push = push
        self.options = options
    }

    /// Notifications dropped because a token's queue was full.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// A new token of `user`'s for `environment` (`development` or `production`). When the user holds
    /// `maxTokensPerUser` already, the oldest is forgotten (its poll answers empty).
    public func create(user: String, environment: String, container: String) -> String {
        let token = SecretToken.make()
        let forgotten: Courier? = state.withLock { s in
            s.next += 1
            s.couriers[token] = Courier(user: user, deviceID: Self.deviceID, environment: environment,
                                        container: container, created: s.next)
            let mine = s.couriers.filter { $0.value.user == user }
            guard mine.count > options.maxTokensPerUser,
                  let oldest = mine.min(by: { $0.value.created < $1.value.created }) else { return nil }
            return s.couriers.removeValue(forKey: oldest.key)
        }
        if let forgotten { Self.end(forgotten) }
        return token
    }

    /// The token's registration as `user` sees it: nil when it is unknown, another user's, or of
    /// another environment (one answer for all three, so a guess learns nothing).
    public func registration(token: String, user: String, environment: String) -> Registration? {
        state.withLock { s in
            guard let c = s.couriers[token], c.user == user, c.environment == environment else { return nil }
            return Registration(user: c.user, deviceID: c.deviceID, already: c.registered)
        }
    }

    /// Marks the token registered and starts collecting what is delivered to its device. Called once
    /// the store has the device (so the subscriptions fire to it).
    public func activate(token: String) {
        let listen: (user: String, device: String)? = state.withLock { s in
            guard !s.stopped, let c = s.couriers[token], !c.registered else { return nil }
            s.couriers[token]!.registered = true
            return (c.user, c.deviceID)
        }
        guard let listen else { return }
        let stream = push.listen(user: listen.user, deviceID: listen.device)
        let task = Task { [weak self] in
            for await note in stream { self?.deliver(note, to: token) }
        }
        let orphan = state.withLock { s -> Bool in
            guard s.couriers[token] != nil else { return true }
            s.couriers[token]!.listener = task
            return false
        }
        if orphan { task.cancel() }
    }

    /// Waits for the token's next notification: at once when one is queued, else up to `timeout`.
    /// `caller` is the user the poll's credentials name, if it sent any.
    public func poll(token: String, caller: String?) async -> PollResult {
        enum Now { case answer(PollResult), wait(user: String, container: String) }
        let now: Now = state.withLock { s in
            guard let c = s.couriers[token] else { return .answer(.unknown) }
            if let caller, caller != c.user { return .answer(.forbidden) }
            guard c.registered else { return .answer(.notRegistered) }
            if let note = s.couriers[token]!.queued.pop() {
                return .answer(.notification(note, user: c.user, container: c.container))
            }
            return .wait(user: c.user, container: c.container)
        }
        guard case .wait(let user, let container) = now else {
            if case .answer(let r) = now { return r }
            return .empty
        }
        let id = state.withLock { s in s.next += 1; return s.next }
        let note: PushNotification? = await withCheckedContinuation { (continuation: Waiter) in
            enum Install { case installed(superseded: Waiter?), ready(PushNotification?) }
            let install: Install = state.withLock { s in
                guard !s.stopped, s.couriers[token] != nil else { return .ready(nil) }
                if let note = s.couriers[token]!.queued.pop() { return .ready(note) }
                let old = s.couriers[token]!.waiter
                s.couriers[token]!.waiter = (id, continuation, nil)
                old?.timer?.cancel()
                return .installed(superseded: old?.continuation)
            }
            switch install {
            case .ready(let note):
                continuation.resume(returning: note)
            case .installed(let superseded):
                superseded?.resume(returning: nil)
                let timeout = options.timeout
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    if !Task.isCancelled { self?.expire(token: token, id: id) }
                }
                let stale = state.withLock { s -> Bool in
                    guard s.couriers[token]?.waiter?.id == id else { return true }
                    s.couriers[token]!.waiter!.timer = timer
                    return false
                }
                if stale { timer.cancel() }
            }
        }
        guard let note else { return .empty }
        return .notification(note, user: user, container: container)
    }

    /// Ends every poll (answered empty) and every listener.
    public func stop() {
        let all = state.withLock { s -> [Courier] in
            s.stopped = true
            defer { s.couriers = [:] }
            return Array(s.couriers.values)
        }
        for c in all { Self.end(c) }
    }

    private func deliver(_ note: PushNotification, to token: String) {
        let waiter: Waiter? = state.withLock { s in
            guard s.couriers[token] != nil else { return nil }
            if let w = s.couriers[token]!.waiter {
                s.couriers[token]!.waiter = nil
                w.timer?.cancel()
                return w.continuation
            }
            s.couriers[token]!.queued.append(note)
            if s.couriers[token]!.queued.count > options.maxQueued {
                _ = s.couriers[token]!.queued.pop()
                s.dropped += 1
            }
            return nil
        }
        waiter?.resume(returning: note)
    }

    private func expire(token: String, id: UInt64) {
        let waiter: Waiter? = state.withLock { s in
            guard let w = s.couriers[token]?.waiter, w.id == id else { return nil }
            s.couriers[token]!.waiter = nil
            return w.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// Answers a forgotten token's poll and stops its listener; outside the lock.
    private static func end(_ c: Courier) {
        c.waiter?.timer?.cancel()
        c.waiter?.continuation.resume(returning: nil)
        c.listener?.cancel()
    }
}
