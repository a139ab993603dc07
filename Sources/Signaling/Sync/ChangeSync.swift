// The change-sync machine, spec §5: decides when to fetch and what, keeps the change tokens
// (per zone and per database, docs/STORE.md "Reads and change feeds"), follows `moreComing`,
// resets an expired token once, and waits out `requestRateLimited`/`serviceUnavailable`
// (`retryAfter`) and `zoneBusy` (exponential backoff). It never touches the store: it asks for
// fetches and is told their results.
import RecordStore
import ZoneCore

/// One ingestion path: a strategy's timing, its tokens and its fetches in flight.
///
/// In: `start`, push notifications, `fetchNow`, whether a call is negotiating, timers, and the
/// results of the fetches it asked for. Out: fetch requests, pages of changes to deliver to the
/// inbox, and `nextDeadline`. At most one fetch is in flight; triggers that come meanwhile are
/// coalesced into one follow-up fetch.
public struct ChangeSync: Sendable {
    /// Actions handled but not yet polled.
    private var pendingOutputs = OutputQueue<Action>()

    /// What a path did, for reports and the polling-versus-push comparison.
    public struct Counters: Hashable, Sendable, Codable {
        /// Requests made (database and zone change fetches).
        public var requests = 0
        /// Records received (every version, duplicates included).
        public var recordsFetched = 0
        /// Deleted record IDs received.
        public var deletionsFetched = 0
        /// Bytes of record data received (names, types and fields).
        public var bytesFetched = 0
        /// Full scans started (`since: nil` on purpose).
        public var fullScans = 0
        /// Push notifications received.
        public var notifications = 0
        /// Change tokens dropped after `changeTokenExpired`.
        public var tokenResets = 0
        /// `requestRateLimited` or `serviceUnavailable` answers (waited out for `retryAfter`).
        public var throttled = 0
        /// `zoneBusy` answers (waited out with exponential backoff).
        public var backoffs = 0
        /// Other failed requests (given up until the next trigger).
        public var failures = 0

        public init() {}

        public static func + (a: Counters, b: Counters) -> Counters {
            var c = a
            c.requests += b.requests; c.recordsFetched += b.recordsFetched
            c.deletionsFetched += b.deletionsFetched; c.bytesFetched += b.bytesFetched
            c.fullScans += b.fullScans; c.notifications += b.notifications; c.tokenResets += b.tokenResets
            c.throttled += b.throttled; c.backoffs += b.backoffs; c.failures += b.failures
            return c
        }
    }

    /// What happens to the path.
    public enum Event: Sendable {
        /// Begin: make the first (catch-up) fetch and start the poll timer.
        case start
        /// A push notification reached the device.
        case notification(PushNotification)
        /// Fetch as soon as possible (the negotiator expects something).
        case fetchNow
        /// Whether a call is negotiating now (hybrid's fast poll; paths active only then).
        case negotiating(Bool)
        /// Time passed.
        case timer
        /// The answer to `fetchDatabaseChanges`.
        case databaseChanges(DatabaseChanges)
        /// The answer to `fetchZoneChanges`.
        case zoneChanges(ZoneChanges)
        /// The last fetch failed. Indirect: an error is large, and rare beside the other events.
        indirect case failed(StoreError)
    }

    /// What the path asks of its driver.
    public enum Action: Hashable, Sendable {
        /// Fetch the database's changed zones since `since` (nil: all).
        case fetchDatabaseChanges(since: ChangeToken?)
        /// Fetch the zone's changes since `since` (nil: the whole zone).
        case fetchZoneChanges(since: ChangeToken?)
        /// Hand these changes to the inbox.
        case deliver(ZoneChanges)
        /// The zone was deleted or access to it lost: the path has stopped. Indirect: rare, and an
        /// error is large.
        indirect case zoneUnavailable(StoreError)
    }

    /// The kinds of work a path does.
    private enum Job: Hashable {
        /// Database changes, then zone changes if our zone is among them.
        case push
        /// Zone changes since the stored token.
        case token
        /// The whole zone, page by page.
        case scan
    }

    public let strategy: SyncStrategy
    public let timing: SyncTiming
    /// The zone (owner resolved) and the database it is reached through.
    public let zone: ZoneID
    public let scope: DatabaseScope
    /// When true the path polls only while a call is negotiating (the reference design's signal
    /// poll ran from call start until connected).
    public let pollsOnlyWhileNegotiating: Bool
    /// When true every push fetches this path's zone at once, as one naming the zone does, instead
    /// of asking the database which zones changed first (a database subscription's push, the only
    /// kind the shared database has, names none): the path watches one zone, so that answer could
    /// only name it or nothing, and the zone fetch says as well when the zone was deleted or the
    /// share revoked (`zoneNotFound`, `permissionFailure`). One round trip per push, not two.
    public let pushFetchesZone: Bool
    /// The zone's change token (token jobs).
    public private(set) var zoneToken: ChangeToken?
    /// The database's change token (push jobs).
    public private(set) var databaseToken: ChangeToken?
    public private(set) var counters = Counters()

    private var started = false
    private var stopped = false
    private var negotiating = false
    /// Jobs waiting to run, oldest first: at most one of each kind, so three at most.
    /// At most one of each of the three jobs (see `enqueue`), so taking the first moves two at most.
    private var pending: [Job] = []
    private var running: (job: Job, request: Action)?
    /// A push job found our zone changed: follow with zone changes.
    private var pushFoundZone = false
    private var nextPoll: Instant?
    private var blockedUntil: Instant?
    private var backoffAttempt = 0

    public init(strategy: SyncStrategy, timing: SyncTiming = .default, zone: ZoneID, scope: DatabaseScope,
                pollsOnlyWhileNegotiating: Bool = false, pushFetchesZone: Bool = false,
                zoneToken: ChangeToken? = nil, databaseToken: ChangeToken? = nil) {
        self.strategy = strategy
        self.timing = timing
        self.zone = zone
        self.scope = scope
        self.pollsOnlyWhileNegotiating = pollsOnlyWhileNegotiating
        self.pushFetchesZone = pushFetchesZone
        self.zoneToken = zoneToken
        self.databaseToken = databaseToken
    }

    /// When the path next needs a `.timer`.
    public var nextDeadline: Instant? {
        if running != nil { return nil }
        if let blockedUntil, !pending.isEmpty { return blockedUntil }
        return nextPoll
    }

    /// Whether a fetch is in flight.
    public var isFetching: Bool { running != nil }

    /// Feeds one event at `now`; the fetches and deliveries it causes wait in `pollOutput()`, in order.
    public mutating func handle(_ event: Event, now: Instant) {
        for action in step(event, now: now) { pendingOutputs.append(action) }
    }

    /// The oldest action not yet taken, or nil until the next event.
    public mutating func pollOutput() -> Action? { pendingOutputs.pop() }

    /// One event's actions, in order (`CallSignaling` steps its paths this way).
    mutating func step(_ event: Event, now: Instant) -> [Action] {
        guard !stopped else { return [] }
        var out: [Action] = []
        switch event {
        case .start:
            guard !started else { return [] }
            started = true
            enqueue(strategy == .pollFullScan ? .scan : .token)
            schedulePoll(from: now)
        case .notification(let note):
            counters.notifications += 1
            guard strategy.usesPush, note.databaseScope == scope else { break }
            // A push naming another zone may stand for ours too (pushes are coalesced per device).
            enqueue(pushFetchesZone || note.zoneID.map(isOurZone) == true ? .token : .push)
        case .fetchNow:
            enqueue(strategy == .pollFullScan ? .scan : .token)
        case .negotiating(let value):
            guard value != negotiating else { break }
            negotiating = value
            schedulePoll(from: now)
        case .timer:
            if let poll = nextPoll, poll <= now {
                enqueue(strategy == .pollFullScan ? .scan : .token)
                schedulePoll(from: now)
            }
            if let until = blockedUntil, until <= now { blockedUntil = nil }
        // `out` is still empty here: the arrivals' actions are taken as they are.
        case .databaseChanges(let changes):
            out = databaseChangesArrived(changes)
        case .zoneChanges(let changes):
            out = zoneChangesArrived(changes)
        case .failed(let error):
            out = failed(error, now: now)
        }
        if running == nil, blockedUntil.map({ $0 <= now }) ?? true, !pending.isEmpty {
            blockedUntil = nil
            out.append(begin(pending.removeFirst()))
        }
        return out
    }

    // MARK: Jobs

    /// Queues a job unless the same one is already waiting (a trigger during a fetch still gets
    /// its own fetch afterwards: the one in flight may have been answered before the change).
    private mutating func enqueue(_ job: Job) {
        if !pending.contains(job) { pending.append(job) }
    }

    private mutating func begin(_ job: Job) -> Action {
        let request: Action
        switch job {
        case .push:
            pushFoundZone = false
            request = .fetchDatabaseChanges(since: databaseToken)
        case .token:
            request = .fetchZoneChanges(since: zoneToken)
        case .scan:
            counters.fullScans += 1
            request = .fetchZoneChanges(since: nil)
        }
        return send(request, for: job)
    }

    private mutating func send(_ request: Action, for job: Job) -> Action {
        running = (job, request)
        counters.requests += 1
        return request
    }

    private mutating func databaseChangesArrived(_ changes: DatabaseChanges) -> [Action] {
        guard let (job, _) = running, job == .push else { return [] }
        backoffAttempt = 0
        databaseToken = changes.syncToken
        if changes.changedZones.contains(where: isOurZone) { pushFoundZone = true }
        if changes.deletedZones.contains(where: isOurZone) || changes.purgedZones.contains(where: isOurZone) {
            return stop(StoreError(.zoneNotFound, "zone \(zone) was deleted"))
        }
        if changes.moreComing { return [send(.fetchDatabaseChanges(since: databaseToken), for: .push)] }
        guard pushFoundZone else {
            running = nil
            return []
        }
        return [send(.fetchZoneChanges(since: zoneToken), for: .push)]
    }

    private mutating func zoneChangesArrived(_ changes: ZoneChanges) -> [Action] {
        guard let (job, _) = running else { return [] }
        backoffAttempt = 0
        counters.recordsFetched += changes.changed.count
        counters.deletionsFetched += changes.deleted.count
        counters.bytesFetched += changes.changed.reduce(0) {
            $0 + $1.fieldDataSize + $1.id.recordName.utf8.count + $1.recordType.utf8.count
        }
        var out: [Action] = [.deliver(changes)]
        if job == .scan {
            // A full scan keeps its page token only for its own pages.
            if changes.moreComing {
                out.append(send(.fetchZoneChanges(since: changes.syncToken), for: .scan))
            } else {
                running = nil
            }
            return out
        }
        zoneToken = changes.syncToken
        if changes.moreComing {
            out.append(send(.fetchZoneChanges(since: zoneToken), for: job))
        } else {
            running = nil
        }
        return out
    }

    private mutating func failed(_ error: StoreError, now: Instant) -> [Action] {
        guard let (job, request) = running else { return [] }
        running = nil
        switch error.code {
        case .changeTokenExpired:
            // Once: a fetch without a token cannot expire.
            counters.tokenResets += 1
            switch request {
            case .fetchDatabaseChanges(let since?) where since == databaseToken:
                databaseToken = nil
                return [send(.fetchDatabaseChanges(since: nil), for: job)]
            case .fetchZoneChanges(let since?) where since == zoneToken || job == .scan:
                if job != .scan { zoneToken = nil }
                return [send(.fetchZoneChanges(since: nil), for: job)]
            default:
                counters.failures += 1
                return []
            }
        case .requestRateLimited, .serviceUnavailable:
            counters.throttled += 1
            let wait = error.retryAfter.map { Duration.milliseconds(Int64(($0 * 1000).rounded(.up))) }
            retryLater(job, at: now + (wait ?? backoff()))
            return []
        case .zoneBusy:
            counters.backoffs += 1
            retryLater(job, at: now + backoff())
            return []
        case .zoneNotFound, .permissionFailure:
            return stop(error)
        default:
            counters.failures += 1
            return []
        }
    }

    /// Puts the job back at the head of the queue, to run from its start once `at` has come.
    /// (A scan or a push restarts whole; a token job resumes from its stored token anyway.)
    private mutating func retryLater(_ job: Job, at: Instant) {
        pending.removeAll { $0 == job }
        pending.insert(job, at: 0)
        blockedUntil = max(blockedUntil ?? at, at)
    }

    /// `backoffBase · 2^attempt`, at most `backoffCap`.
    private mutating func backoff() -> Duration {
        let base = timing.backoffBase.nanoseconds
        let shift = min(backoffAttempt, 30)
        backoffAttempt += 1
        let (scaled, overflow) = base.multipliedReportingOverflow(by: Int64(1) << shift)
        return .nanoseconds(overflow ? timing.backoffCap.nanoseconds : min(scaled, timing.backoffCap.nanoseconds))
    }

    private mutating func stop(_ error: StoreError) -> [Action] {
        stopped = true
        running = nil
        pending = []
        nextPoll = nil
        return [.zoneUnavailable(error)]
    }

    // MARK: Timing

    /// The current poll interval, or nil when this path does not poll now.
    private var pollInterval: Duration? {
        if pollsOnlyWhileNegotiating && !negotiating { return nil }
        switch strategy {
        case .push: return nil
        case .pollToken, .pollFullScan: return timing.pollInterval
        case .hybrid: return negotiating ? timing.pollInterval : timing.safetyPollInterval
        }
    }

    private mutating func schedulePoll(from now: Instant) {
        guard started, let interval = pollInterval else {
            nextPoll = nil
            return
        }
        let candidate = now + interval
        // Becoming faster takes effect at once; a slower interval waits for the next poll.
        if let current = nextPoll, current > now, current < candidate { return }
        nextPoll = candidate
    }

    private func isOurZone(_ id: ZoneID) -> Bool {
        id.zoneName == zone.zoneName
            && (id.ownerName.isEmpty || zone.ownerName.isEmpty || id.ownerName == zone.ownerName)
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension ChangeSync: SansIOMachine {}
