// The record store as the simulated peers reach it: the real `StoreEngine` behind a request
// latency, with the faults of `StoreFaults`, and the real `PushDeliveryModel` carrying the
// engine's notifications to devices. A request takes half its round trip to reach the engine,
// runs there at that instant, and its outcome takes the other half back. One client's requests
// reach the engine in the order they were sent (one connection per device).
import RecordStore
import Signaling
import ZoneCore

/// The store, its push service and their faults, on the simulator's clock.
public struct SimulatedStore {
    /// What the store did, for reports.
    public struct Counters: Hashable, Sendable, Codable {
        public var requests = 0
        public var failures = 0
        /// Requests refused because the store was restarting.
        public var refusedRestarting = 0
        /// Fetches refused because their token had been expired by a fault.
        public var tokensExpired = 0
        /// Notifications lost to a push outage or a restart.
        public var pushesLostToFaults = 0

        public init() {}
    }

    public private(set) var engine: StoreEngine
    public private(set) var push: PushDeliveryModel
    public let latency: LatencyDistribution
    public let faults: StoreFaults
    /// Simulated time zero for the faults' offsets: the call's start.
    public let origin: Instant
    public private(set) var counters = Counters()
    private var random: SeededRandom
    /// Per client: when its last request reached the engine (requests arrive in order); a call has
    /// a handful of clients (`ShortMap`).
    private var lastArrival = ShortMap<String, Instant>()
    /// When each change token handed out was issued (for token-expiry faults).
    private var tokenIssued: [String: Instant] = [:]
    private var restartsBegun = Set<Int>()

    public init(engine: StoreEngine, pushProfile: PushProfile, latency: LatencyDistribution, faults: StoreFaults,
                origin: Instant, seed: UInt64) {
        self.engine = engine
        // Nothing here is journalled: the scene's mutations are let go and no request's are kept.
        self.engine.keepsMutations = false
        var random = SeededRandom(seed: seed)
        push = PushDeliveryModel(profile: pushProfile, seed: random.next(), devices: engine.registeredDeviceCount)
        self.latency = latency
        self.faults = faults
        self.origin = origin
        self.random = random
    }

    /// When a request sent now by `client` reaches the engine, and how long its reply then takes.
    public mutating func timing(client: String, now: Instant) -> (arrival: Instant, replyDelay: Duration) {
        let rtt = latency.sample(&random)
        let half = Duration.nanoseconds(rtt.nanoseconds / 2)
        let arrival = max(now + half, lastArrival[client] ?? now)
        lastArrival[client] = arrival
        return (arrival, rtt - half)
    }

    /// Carries out `request` for `user` on `device` now.
    public mutating func execute(_ request: StoreRequest, user: String, device: String, now: Instant) -> StoreOutcome {
        counters.requests += 1
        let offset = now - origin
        if !faults.restarts.isEmpty { beginRestarts(offset: offset) }
        if !faults.restarts.isEmpty, let window = faults.restarts.first(where: { $0.contains(offset) }) {
            counters.refusedRestarting += 1
            counters.failures += 1
            let left = max(0.001, (window.end - offset).seconds)
            return .failed(StoreError(.serviceUnavailable, "the store is restarting (injected)",
                                      retryAfter: (left * 1000).rounded(.up) / 1000))
        }
        if !faults.tokenExpiries.isEmpty, let token = Self.token(of: request),
           expired(token, now: now, offset: offset) {
            counters.tokensExpired += 1
            counters.failures += 1
            return .failed(StoreError(.changeTokenExpired, "the change token expired (injected): fetch without one"))
        }
        let ctx = RequestContext(user: user, deviceID: device, now: now)
        let outcome = engine.perform(request, ctx)
        if case .failed = outcome { counters.failures += 1 }
        if !faults.tokenExpiries.isEmpty {
            switch outcome {
            case .zoneChanges(let changes): tokenIssued[changes.syncToken.rawValue] = now
            case .databaseChanges(let changes): tokenIssued[changes.syncToken.rawValue] = now
            default: break
            }
        }
        let notes = engine.drainNotifications()
        if !notes.isEmpty {
            if !faults.pushOutages.isEmpty, faults.pushOutages.contains(where: { $0.contains(offset) }) {
                counters.pushesLostToFaults += notes.count
            } else {
                for note in notes { push.handle(.submit(note), now: now) }
            }
        }
        return outcome
    }

    /// Notifications whose delivery time has come.
    public mutating func duePushes(now: Instant) -> [DeviceNotification] {
        push.handle(.timer, now: now)
        let due = push.drainOutputs()
        guard !due.isEmpty, !faults.pushOutages.isEmpty,
              faults.pushOutages.contains(where: { $0.contains(now - origin) }) else { return due }
        // The push service is down: what was due is lost.
        counters.pushesLostToFaults += due.count
        return []
    }

    /// When the next push delivery is due.
    public var nextPushDeadline: Instant? { push.nextDeadline }

    /// Every live record of `zone` as its owner reads it, outside the simulated traffic (no request is
    /// counted, no latency drawn): what a trial checks is left once everyone has hung up.
    public mutating func liveRecords(of zone: ZoneID, owner: String, now: Instant) -> [Record] {
        var records: [Record] = []
        var token: ChangeToken?
        while true {
            guard let page = try? engine.fetchZoneChanges(zone, since: token, scope: .private,
                                                          RequestContext(user: owner, now: now)) else { break }
            records += page.changed
            token = page.syncToken
            if !page.moreComing { break }
        }
        return records
    }

    /// A restart loses the pushes waiting for delivery (the push service's queue is in memory).
    private mutating func beginRestarts(offset: Duration) {
        for (i, window) in faults.restarts.enumerated() where window.contains(offset) && !restartsBegun.contains(i) {
            restartsBegun.insert(i)
            counters.pushesLostToFaults += push.pendingCount
            let profile = push.profile
            push = PushDeliveryModel(profile: profile, seed: random.next(), devices: engine.registeredDeviceCount)
        }
    }

    private func expired(_ token: ChangeToken, now: Instant, offset: Duration) -> Bool {
        guard let issued = tokenIssued[token.rawValue] else { return false }
        return faults.tokenExpiries.contains { $0 <= offset && issued < origin + $0 }
    }

    private static func token(of request: StoreRequest) -> ChangeToken? {
        switch request.operation {
        case .fetchZoneChanges(_, let since, _): return since
        case .fetchDatabaseChanges(let since): return since
        default: return nil
        }
    }
}

extension StoreEngine {
    /// Carries out a signaling store request synchronously; every error comes back as `.failed`.
    public mutating func perform(_ request: StoreRequest, _ ctx: RequestContext) -> StoreOutcome {
        let scope = request.scope
        do throws(StoreError) {
            switch request.operation {
            case .modifyRecords(let r): return .modified(try modifyRecords(r, scope: scope, ctx))
            case .lookupRecords(let ids): return .lookedUp(try lookupRecords(ids, scope: scope, ctx))
            case .fetchZoneChanges(let zone, let since, let limit):
                return .zoneChanges(try fetchZoneChanges(zone, since: since, resultsLimit: limit, scope: scope, ctx))
            case .fetchDatabaseChanges(let since):
                return .databaseChanges(try fetchDatabaseChanges(since: since, resultsLimit: nil, scope: scope, ctx))
            case .createZone(let zone): return .zones(try modifyZones(save: [zone], delete: [], scope: scope, ctx))
            case .createShare(let zone, let permission, let participants):
                return .share(try createShare(zone: zone, publicPermission: permission, participants: participants,
                                              ctx))
            case .fetchShare(let zone): return .share(try fetchShare(zone: zone, scope: scope, ctx))
            case .acceptShare(let zone): return .share(try acceptShare(zone: zone, ctx))
            case .saveSubscription(let s):
                return .subscriptions(try modifySubscriptions(save: [s], delete: [], scope: scope, ctx))
            }
        } catch {
            return .failed(error)
        }
    }
}
