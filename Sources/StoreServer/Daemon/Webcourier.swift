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
/// on another. A registered token is a device of its user in the store (every web token of a user is
/// the one device `webcourier`), so the store's subscriptions fire to it as to any peer's device,
/// through the same push delivery model (and its profile's delay).
///
/// Between polls nothing is lost: from its start, each daemon takes every delivery to a `webcourier`
/// device (the push hub's sink for that device ID, fed on PostgreSQL by the shared log whichever
/// daemon wrote) into its user's mailbox, whether or not a poll waits. Each token this daemon answers
/// for (a follower) reads the mailbox from its own cursor, so a poll finding something answers at once
/// and the next poll takes the next one. A mailbox holds `maxQueued`; past it a pending notification
/// for the same subscription, zone and record gives way to the new one (as APNs collapses
/// notifications with one collapse ID), else the oldest is dropped and a token that had not read it
/// gets its next notification with `isPruned` set: fetch changes for all of your subscriptions.
///
/// The mailboxes live in this process only; what was waiting when a daemon stops is gone. So that
/// it does not vanish silently, a token registered before this daemon started owes, at its first
/// poll or register here, one notification per subscription of its user (`isPruned` set) — the hint
/// to fetch changes that covers whatever was missed.
///
/// Nothing waits on a thread: a poll is a suspended task, resumed by a delivery or its timer; one
/// poll waits per token (a newer one takes over) and at most `maxTokensPerUser` tokens per user are
/// followed. Locks (the deadlock rule of the daemon): a continuation is resumed and a task cancelled
/// only after `state` is released, and nothing else is taken while it is held; the hub calls the
/// sink outside its own lock.
public final class Webcourier: Sendable {
    /// Limits of the long-poll.
    public struct Options: Sendable {
        /// How long a poll waits for a notification before it answers empty (the client polls again).
        public var timeout: Duration = .seconds(30)
        /// Notifications kept per user (all of a user's tokens read one mailbox) between polls; past
        /// it one for the same subscription, zone and record gives way, else the oldest is dropped.
        public var maxQueued = 64
        /// Tokens one user may hold; creating one more forgets that user's oldest. Also the most
        /// tokens a daemon follows for one user, so the most polls of one user waiting at once.
        public var maxTokensPerUser = 16

        public init() {}
    }

    /// Where tokens are polled: `GET /webcourier?tok=TOKEN`. The token is in the query, which is
    /// never logged, not in the path, which is.
    public static let path = "/webcourier"

    /// The store device of every web token of a user: one device, whose deliveries every token of
    /// the user reads, so a user's tokens never use up the store's devices per user.
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
        /// The next notification for the token, whether some before it were dropped (or it is a
        /// catch-up after a restart), and the token's user and container.
        case notification(PushNotification, pruned: Bool, user: String, container: String)
        /// Nothing within the timeout (or a newer poll of the same token took over).
        case empty
    }

    /// What a waiting poll is handed.
    private typealias Answer = (note: PushNotification, pruned: Bool)
    private typealias Waiter = CheckedContinuation<Answer?, Never>

    private struct Entry {
        var seq: UInt64
        var note: PushNotification
    }

    /// One user's notifications, oldest first, read by every token of the user this daemon follows.
    private struct Mailbox {
        var entries: [Entry] = []
        /// The newest entry dropped at the bound (0: none): a token whose cursor is behind it lost one.
        var droppedThrough: UInt64 = 0
    }

    /// A token this daemon answers polls of.
    private struct Follower {
        let user: String
        let container: String
        let since: UInt64
        /// The newest mailbox entry answered to this token's polls.
        var cursor: UInt64
        /// Catch-up notifications still owed (see the type's comment), answered first.
        var owed: [PushNotification]
        var waiter: (id: UInt64, continuation: Waiter, timer: Task<Void, Never>?)?
    }

    private struct State {
        var mailboxes: [String: Mailbox] = [:]
        /// By token digest.
        var followers: [String: Follower] = [:]
        /// Each user's followed digests.
        var followed: [String: Set<String>] = [:]
        /// The last mailbox sequence number given.
        var seq: UInt64 = 0
        var next: UInt64 = 0
        var dropped = 0
        var coalesced = 0
        var stopped = false

        mutating func remove(_ digest: String) -> Follower? {
            guard let gone = followers.removeValue(forKey: digest) else { return nil }
            followed[gone.user]?.remove(digest)
            if followed[gone.user]?.isEmpty == true { followed[gone.user] = nil }
            return gone
        }

        /// The token's next notification, moving its cursor past it.
        mutating func pop(_ digest: String) -> Answer? {
            guard var f = followers[digest] else { return nil }
            if !f.owed.isEmpty {
                let note = f.owed.removeFirst()
                followers[digest] = f
                return (note, true)
            }
            guard let box = mailboxes[f.user], let e = box.entries.first(where: { $0.seq > f.cursor }) else {
                return nil
            }
            let pruned = f.cursor < box.droppedThrough
            f.cursor = e.seq
            followers[digest] = f
            return (e.note, pruned)
        }
    }

    private let state = Mutex(State())
    private static let log = Logger(component: "webcourier")
    private let store: any StoreBackend
    public let options: Options
    /// The registered tokens' digests when this daemon started (nil when the store could not say):
    /// the tokens that may have missed notifications while no daemon of this process ran.
    private let before: Task<Set<String>?, Never>

    public init(store: any StoreBackend, options: Options = Options()) {
        self.store = store
        self.options = options
        before = Task {
            let digests = try? await store.perform(user: Self.deviceID, deviceID: nil,
                                                   access: .read) { e, _ throws(StoreError) in
                e.registeredWebTokenDigests()
            }
            return digests.map(Set.init)
        }
        store.push.sink(deviceID: Self.deviceID, owner: ObjectIdentifier(self)) { [weak self] user, note in
            self?.deliver(note, to: user)
        }
    }

    /// Returns once this daemon knows which tokens were registered before it started (a token
    /// registered through another daemon before then is taken for one of those: a catch-up too many,
    /// never a notification lost).
    public func ready() async { _ = await before.value }

    /// Notifications dropped because a user's mailbox was full.
    public var dropped: Int { state.withLock { $0.dropped } }
    /// Notifications that gave way, in a full mailbox, to a newer one for the same subscription,
    /// zone and record.
    public var coalesced: Int { state.withLock { $0.coalesced } }
    /// Notifications waiting in `user`'s mailbox here (read by some of their tokens or not).
    public func mailboxCount(user: String) -> Int { state.withLock { $0.mailboxes[user]?.entries.count ?? 0 } }
    /// Polls waiting now.
    public var waiting: Int { state.withLock { $0.followers.values.count(where: { $0.waiter != nil }) } }

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
            let ended = state.withLock { s in forgotten.compactMap { s.remove($0) } }
            for f in ended { Self.end(f) }
        }
        return token
    }

    /// Registers the token (`tokens/register`): it must be `user`'s, made for `environment`, else
    /// `BAD_REQUEST`. Its device joins the user's devices in the store and this daemon follows it
    /// from now on. Registering again changes nothing.
    public func register(token: String, user: String, environment: String) async throws {
        let digest = Self.digest(token)
        let (stored, already) = try await store.perform(user: user, deviceID: Self.deviceID,
                                                        access: .write) { e, ctx throws(StoreError) in
            try e.registerWebToken(digest: digest, environment: environment, ctx)
        }
        await follow(stored, fresh: !already)
    }

    /// The token's next notification: at once when one waits, else up to `timeout`. `caller` is the
    /// user the poll's credentials name, if it sent any. The store says whether the token exists and
    /// is registered (another daemon may have made, registered or forgotten it).
    public func poll(token: String, caller: String?) async -> PollResult {
        // Only what tokens/create makes reaches the store.
        guard SecretToken.isWellFormed(token) else { return .unknown }
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
            // Forgotten (through another daemon, perhaps): stop following it here.
            if let gone = state.withLock({ $0.remove(digest) }) { Self.end(gone) }
            return .unknown
        }
        if let caller, caller != stored.user { return .forbidden }
        guard stored.registered else { return .notRegistered }
        await follow(stored, fresh: false)
        let answered: Answer? = await withCheckedContinuation { (continuation: Waiter) in
            enum Install { case installed(superseded: Waiter?, timer: Task<Void, Never>?), ready(Answer?) }
            let id = state.withLock { s in s.next += 1; return s.next }
            let install: Install = state.withLock { s in
                guard !s.stopped, s.followers[digest] != nil else { return .ready(nil) }
                if let answer = s.pop(digest) { return .ready(answer) }
                let old = s.followers[digest]!.waiter
                s.followers[digest]!.waiter = (id, continuation, nil)
                return .installed(superseded: old?.continuation, timer: old?.timer)
            }
            switch install {
            case .ready(let answer):
                continuation.resume(returning: answer)
            case .installed(let superseded, let oldTimer):
                oldTimer?.cancel()
                superseded?.resume(returning: nil)
                let timeout = options.timeout
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    if !Task.isCancelled { self?.expire(digest: digest, id: id) }
                }
                let stale = state.withLock { s -> Bool in
                    guard s.followers[digest]?.waiter?.id == id else { return true }
                    s.followers[digest]!.waiter!.timer = timer
                    return false
                }
                if stale { timer.cancel() }
            }
        }
        guard let answered else { return .empty }
        return .notification(answered.note, pruned: answered.pruned, user: stored.user, container: stored.container)
    }

    /// Ends every poll (answered empty) and stops taking deliveries.
    public func stop() {
        store.push.sink(deviceID: Self.deviceID, owner: ObjectIdentifier(self), nil)
        let all = state.withLock { s -> [Follower] in
            s.stopped = true
            defer { s.followers = [:]; s.followed = [:]; s.mailboxes = [:] }
            return Array(s.followers.values)
        }
        for f in all { Self.end(f) }
    }

    /// Starts answering for a registered token here, unless this daemon does already. `fresh`: it was
    /// registered through this daemon just now, so it reads from here on. Otherwise, registered
    /// before this daemon started, it owes a catch-up; registered since (through another daemon), it
    /// reads everything its user's mailbox here still holds. A user's followers are held to
    /// `maxTokensPerUser`: past it the oldest stops (its next poll follows it again).
    private func follow(_ stored: WebPushToken, fresh: Bool) async {
        let digest = stored.digest
        if state.withLock({ $0.followers[digest] != nil || $0.stopped }) { return }
        var owed: [PushNotification] = []
        var fromOldest = false
        if !fresh {
            if await before.value?.contains(digest) ?? true {
                owed = await catchUp(user: stored.user)
            } else {
                fromOldest = true
            }
        }
        let evicted: Follower? = state.withLock { s in
            guard !s.stopped, s.followers[digest] == nil else { return nil }
            s.next += 1
            s.followers[digest] = Follower(user: stored.user, container: stored.container, since: s.next,
                                           cursor: fromOldest ? 0 : s.seq, owed: owed)
            s.followed[stored.user, default: []].insert(digest)
            let mine = s.followed[stored.user] ?? []
            guard mine.count > max(1, options.maxTokensPerUser),
                  let oldest = mine.min(by: { (s.followers[$0]?.since ?? 0) < (s.followers[$1]?.since ?? 0) })
            else { return nil }
            return s.remove(oldest)
        }
        if let evicted { Self.end(evicted) }
    }

    /// One notification per subscription of the user, in every database (at most `maxQueued`): each
    /// tells the client to fetch that subscription's changes, covering what a restart lost.
    private func catchUp(user: String) async -> [PushNotification] {
        let client = store.client(user: user, deviceID: Self.deviceID)
        var notes: [PushNotification] = []
        for scope in [DatabaseScope.private, .shared, .public] {
            guard let subscriptions = try? await client.listSubscriptions(scope: scope) else { continue }
            for s in subscriptions.sorted(by: { $0.subscriptionID < $1.subscriptionID }) {
                let zone: ZoneID?
                switch s.kind {
                case .database: zone = nil
                case .zone(let z): zone = z
                case .query(_, let z): zone = z ?? (scope == .public ? ZoneID.publicZone : nil)
                }
                notes.append(PushNotification(notificationID: 0, subscriptionID: s.subscriptionID,
                                              databaseScope: scope, zoneID: zone))
            }
        }
        return Array(notes.prefix(max(1, options.maxQueued)))
    }

    /// Same subscription, database, zone and record: a newer such notification says all an older one does.
    private static func collapses(_ a: PushNotification, _ b: PushNotification) -> Bool {
        a.subscriptionID == b.subscriptionID && a.databaseScope == b.databaseScope && a.zoneID == b.zoneID
            && a.recordName == b.recordName
    }

    /// The hub's sink: into the user's mailbox, and to each of the user's tokens whose poll waits.
    private func deliver(_ note: PushNotification, to user: String) {
        let limit = max(1, options.maxQueued)
        var droppedNow = 0
        let woken: [(Waiter, Task<Void, Never>?, Answer)] = state.withLock { s in
            guard !s.stopped else { return [] }
            s.seq += 1
            var box = s.mailboxes[user] ?? Mailbox()
            if box.entries.count >= limit {
                if let same = box.entries.firstIndex(where: { Self.collapses($0.note, note) }) {
                    box.entries.remove(at: same)
                    s.coalesced += 1
                } else {
                    box.droppedThrough = box.entries.removeFirst().seq
                    s.dropped += 1
                    droppedNow = s.dropped
                }
            }
            box.entries.append(Entry(seq: s.seq, note: note))
            s.mailboxes[user] = box
            var woken: [(Waiter, Task<Void, Never>?, Answer)] = []
            for digest in s.followed[user] ?? [] {
                guard let w = s.followers[digest]?.waiter, let answer = s.pop(digest) else { continue }
                s.followers[digest]!.waiter = nil
                woken.append((w.continuation, w.timer, answer))
            }
            return woken
        }
        for (continuation, timer, answer) in woken {
            timer?.cancel()
            continuation.resume(returning: answer)
        }
        // Logged at the 1st, 2nd, 4th, 8th… drop: a client that stopped polling cannot flood the log.
        if droppedNow > 0, droppedNow & (droppedNow - 1) == 0 {
            Self.log.warning("a web client's mailbox was full: oldest notification dropped",
                             ["dropped": "\(droppedNow)", "limit": "\(limit)"])
        }
    }

    private func expire(digest: String, id: UInt64) {
        let waiter: Waiter? = state.withLock { s in
            guard let w = s.followers[digest]?.waiter, w.id == id else { return nil }
            s.followers[digest]!.waiter = nil
            return w.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// Answers a forgotten token's poll; outside the lock.
    private static func end(_ f: Follower) {
        f.waiter?.timer?.cancel()
        f.waiter?.continuation.resume(returning: nil)
    }
}
