import Foundation
import RecordStore
import Synchronization
import ZoneCore

/// Push for web clients: the APNs tokens of `tokens/create` and `tokens/register`, and the long-poll
/// on each token's `webcourierURL`.
///
/// CloudKit Web Services Reference, "Creating APNs Tokens (tokens/create)" (CreateTokens.html) and
/// "Registering Tokens (tokens/register)" (RegisterTokens.html): a web client gets a token and the URL
/// to long-poll for notifications, then registers the token. The tokens live in the store
/// (`WebPushToken`, by digest: journal, snapshots, the PostgreSQL log), so they survive a restart and
/// every daemon on a shared database knows them: a token made on one daemon is registered or polled
/// on another. A registered token is a device of its user in the store, so the store's subscriptions
/// fire to it as to any peer's device, through the same push delivery model (and its profile's
/// delay). Each daemon keeps, for the tokens polled or registered through it, a listener that
/// collects what is delivered; a GET on the URL takes the oldest, or waits up to `timeout` and
/// answers empty.
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
        /// Tokens one user may hold; creating one more forgets that user's oldest. Also the most
        /// listeners a daemon keeps for one user's tokens.
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
        /// The store could not be asked.
        case failed(StoreError)
        /// The oldest notification waiting, and the token's user and container.
        case notification(PushNotification, user: String, container: String)
        /// Nothing within the timeout (or a newer poll of the same token took over).
        case empty
    }

    private typealias Waiter = CheckedContinuation<PushNotification?, Never>

    /// A token this daemon collects notifications for.
    private struct Courier {
        let user: String
        let container: String
        let digest: String
        let since: UInt64
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
    private let store: any StoreBackend
    public let options: Options

    public init(store: any StoreBackend, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// Notifications dropped because a token's queue was full.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// How the store knows a token: its SHA-256 in hex.
    static func digest(_ token: String) -> String { Hex.encode(SHA256.hash(Array(token.utf8))) }

    /// A new token of `user`'s for `environment` (`development` or `production`), kept in the store.
    /// When the user holds `maxTokensPerUser` already, the oldest is forgotten (its poll answers empty
    /// here, and `404` from then on).
    public func create(user: String, environment: String, container: String) async throws -> String {
        let token = SecretToken.make()
        let digest = Self.digest(token)
        let limit = options.maxTokensPerUser
        let forgotten = try await store.perform(user: user, deviceID: nil,
                                                access: .write) { e, ctx throws(StoreError) in
            try e.createWebToken(digest: digest, environment: environment, container: container, maxPerUser: limit, ctx)
        }
        if !forgotten.isEmpty {
            let gone = Set(forgotten)
            let ended = state.withLock { s -> [Courier] in
                let keys = s.couriers.filter { gone.contains($0.value.digest) }.map(\.key)
                return keys.compactMap { s.couriers.removeValue(forKey: $0) }
            }
            for c in ended { Self.end(c) }
        }
        return token
    }

    /// Registers the token (`tokens/register`): it must be `user`'s, made for `environment`, else
    /// `BAD_REQUEST`. Its device joins the user's devices in the store and this daemon starts
    /// collecting what is delivered to it. Registering again changes nothing.
    public func register(token: String, user: String, environment: String) async throws {
        let digest = Self.digest(token)
        let (stored, _) = try await store.perform(user: user, deviceID: Self.deviceID,
                                                  access: .write) { e, ctx throws(StoreError) in
            try e.registerWebToken(digest: digest, environment: environment, ctx)
        }
        listen(token: token, stored)
    }

    /// Waits for the token's next notification: at once when one is queued, else up to `timeout`.
    /// `caller` is the user the poll's credentials name, if it sent any. The store says whether the
    /// token exists and is registered (another daemon may have made, registered or forgotten it).
    public func poll(token: String, caller: String?) async -> PollResult {
        let digest = Self.digest(token)
        let stored: WebPushToken?
        do {
            stored = try await store.perform(user: caller ?? Self.deviceID, deviceID: nil,
                                             access: .read) { e, _ throws(StoreError) in e.webToken(digest: digest) }
        } catch let e as StoreError {
            return .failed(e)
        } catch {
            return .failed(StoreError(.internalError, "\(error)"))
        }
        guard let stored else {
            // Forgotten (through another daemon, perhaps): stop collecting for it here.
            if let gone = state.withLock({ $0.couriers.removeValue(forKey: token) }) { Self.end(gone) }
            return .unknown
        }
        if let caller, caller != stored.user { return .forbidden }
        guard stored.registered else { return .notRegistered }
        listen(token: token, stored)
        let popped: PushNotification?? = state.withLock { s in
            guard s.couriers[token] != nil else { return .none }
            return .some(s.couriers[token]!.queued.pop())
        }
        switch popped {
        case .none: return .empty
        case .some(let note?): return .notification(note, user: stored.user, container: stored.container)
        case .some(nil): break
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
        return .notification(note, user: stored.user, container: stored.container)
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

    /// Starts collecting the deliveries of a registered token's device here, unless this daemon does
    /// already. A user's listeners here are held to `maxTokensPerUser`: past it the oldest stops (its
    /// next poll starts it again, if the store still holds its token).
    private func listen(token: String, _ stored: WebPushToken) {
        let evicted: Courier?? = state.withLock { s in
            guard !s.stopped, s.couriers[token] == nil else { return .none }
            s.next += 1
            s.couriers[token] = Courier(user: stored.user, container: stored.container, digest: stored.digest,
                                        since: s.next)
            let mine = s.couriers.filter { $0.value.user == stored.user }
            guard mine.count > options.maxTokensPerUser,
                  let oldest = mine.min(by: { $0.value.since < $1.value.since }) else { return .some(nil) }
            return .some(s.couriers.removeValue(forKey: oldest.key))
        }
        guard case .some(let gone) = evicted else { return }
        if let gone { Self.end(gone) }
        let stream = store.push.listen(user: stored.user, deviceID: Self.deviceID)
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
