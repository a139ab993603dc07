// One peer's signaling for one call, composed: the ingestion paths (spec §5) feeding the
// negotiator (spec §3–4), which owns the one inbox and garbage collection. Still sans-I/O: it
// routes between its machines and hands store requests, ICE commands and reports to its driver.
import RecordStore
import ZoneCore

/// The signaling side of a call, for one peer: change sync + negotiator, no I/O.
public struct CallSignaling: Sendable {
    /// Actions handled but not yet polled.
    private var pendingOutputs = OutputQueue<Action>()
    /// The negotiator's queue of actions, kept from event to event so that stepping it allocates
    /// nothing; nil while an event's actions are being taken (see `negotiate`).
    private var negotiatorActions: OutputQueue<CallNegotiator.Action>? = OutputQueue()

    /// Which machine a store request belongs to; the driver hands it back with the outcome.
    public enum Origin: Hashable, Sendable {
        /// The negotiator's action (echoed so a failed request can be retried or resolved).
        case negotiator(CallNegotiator.Action)
        /// Ingestion path `index`.
        case path(Int)
    }

    /// What happens to the peer's signaling.
    public enum Event: Sendable {
        /// The user starts the call.
        case start
        /// Start a new epoch (ICE restart).
        case restart
        /// The user hangs up.
        case hangUp
        /// A push notification reached the device.
        case notification(PushNotification)
        /// The ICE agent reports.
        case ice(ICEEvent)
        /// A store request's outcome. Indirect: an outcome is large, and rare beside the other events.
        indirect case reply(Origin, StoreOutcome)
        /// Records learned some other way (tests choose their order of arrival with this).
        case fetched([Record], deleted: [RecordID])
        /// Time passed.
        case timer
    }

    /// What the driver must do.
    public enum Action: Hashable, Sendable {
        /// Make the request and reply with `.reply(origin, outcome)`. Indirect, as the outcome is.
        indirect case store(StoreRequest, origin: Origin)
        /// Tell the ICE agent.
        case ice(ICECommand)
        /// The call's state changed.
        case report(CallState)
        /// An ingestion path stopped: the zone is gone or access was lost. Indirect, as the next:
        /// rare and large (an error, a problem).
        indirect case zoneUnavailable(path: String, StoreError)
        /// A record the remote peer wrote was dropped (malformed or refused): log it.
        indirect case rejected(SignalInbox.Problem)
        /// The remote peer hung up: its description of the active epoch left the zone.
        case remoteHungUp(epoch: CallEpoch, EnvelopeType)
    }

    public let configuration: SignalingConfiguration
    public let binding: RoomBinding
    public private(set) var negotiator: CallNegotiator
    public private(set) var paths: [ChangeSync]
    /// Store requests asked for, by kind.
    public private(set) var requests = RequestCounts()

    /// Store requests made, by what they were for.
    public struct RequestCounts: Hashable, Sendable, Codable {
        /// Zone and database change fetches.
        public var fetches = 0
        /// `modifyRecords` requests that save (offers, answers, chunks, the session record).
        public var saves = 0
        /// `modifyRecords` requests that only delete (garbage collection).
        public var deletes = 0
        /// Lookups by record name.
        public var lookups = 0
        /// Every request.
        public var total: Int { fetches + saves + deletes + lookups }
    }

    /// Signaling for the call between `myUserID` and `remoteUserID` in the room `binding` names.
    /// `epochClock` carries the device's last epoch from call to call.
    /// `tokens` restores the change tokens a previous run kept (see `tokens`), path by path.
    public init(configuration: SignalingConfiguration = .default, binding: RoomBinding, myUserID: String,
                remoteUserID: String, epochClock: EpochClock = EpochClock(), seed: UInt64,
                tokens: [SyncTokens] = []) throws(SignalRecordError) {
        negotiator = try CallNegotiator(
            roomID: binding.roomID, myUserID: myUserID, remoteUserID: remoteUserID, zone: binding.zone,
            epochClock: epochClock, configuration: configuration.negotiator, seed: seed)
        self.configuration = configuration
        self.binding = binding
        paths = configuration.ingestion.enumerated().map { index, path in
            let kept = index < tokens.count ? tokens[index] : SyncTokens()
            return ChangeSync(strategy: path.strategy, timing: configuration.timing, zone: binding.zone,
                              scope: binding.scope, pollsOnlyWhileNegotiating: path.pollsOnlyWhileNegotiating,
                              pushFetchesZone: path.pushFetchesZone, zoneToken: kept.zone, databaseToken: kept.database)
        }
        updateDeadline()
    }

    /// The change tokens of one ingestion path, to persist per zone (spec §5) and hand back to
    /// the next `CallSignaling` of the same room.
    public struct SyncTokens: Hashable, Sendable {
        public var zone: ChangeToken?
        public var database: ChangeToken?

        public init(zone: ChangeToken? = nil, database: ChangeToken? = nil) {
            self.zone = zone
            self.database = database
        }
    }

    /// The change tokens of every path now.
    public var tokens: [SyncTokens] {
        paths.map { SyncTokens(zone: $0.zoneToken, database: $0.databaseToken) }
    }

    /// When the machine next needs a `.timer`. Worked out at the end of every event, the only time
    /// the parts change.
    public private(set) var nextDeadline: Instant?

    private mutating func updateDeadline() {
        var next = negotiator.nextDeadline
        for i in paths.indices { next = .earliest(next, paths[i].nextDeadline) }
        nextDeadline = next
    }

    /// Everything counted, summed over the paths.
    public var counters: SignalingCounters {
        SignalingCounters(inbox: negotiator.inbox.counters, negotiator: negotiator.counters,
                          sync: paths.map(\.counters).reduce(ChangeSync.Counters(), +),
                          garbageCollection: negotiator.collector?.counters ?? .init(), requests: requests)
    }

    /// Feeds one event at `now`; the store requests and reports it causes wait in `pollOutput()`, in order.
    public mutating func handle(_ event: Event, now: Instant) {
        // The step appends to the queue itself (taken out of `self` while `self` is stepped).
        var out = pendingOutputs
        pendingOutputs = OutputQueue(capacity: 0)
        step(event, now: now, &out)
        pendingOutputs = out
        updateDeadline()
    }

    /// The oldest action not yet taken, or nil until the next event.
    public mutating func pollOutput() -> Action? { pendingOutputs.pop() }

    /// Appends one event's actions to `out`, in order.
    private mutating func step(_ event: Event, now: Instant, _ out: inout OutputQueue<Action>) {
        switch event {
        case .start:
            negotiate(.startCall, now, &out)
            for i in paths.indices { sync(i, .start, now, &out) }
        case .restart:
            negotiate(.restart, now, &out)
        case .hangUp:
            negotiate(.hangUp, now, &out)
        case .notification(let note):
            for i in paths.indices { sync(i, .notification(note), now, &out) }
        case .ice(let ice):
            negotiate(.ice(ice), now, &out)
        case .fetched(let records, let deleted):
            negotiate(.recordsFetched(records, deleted: deleted), now, &out)
        case .reply(.negotiator(let action), let outcome):
            switch outcome {
            case .modified(let result): negotiate(.modified(result), now, &out)
            case .lookedUp(let results): negotiate(.lookedUp(results), now, &out)
            case .failed(let error): negotiate(.requestFailed(action, error), now, &out)
            case .zoneChanges, .databaseChanges, .zones, .share, .subscriptions: break
            }
        case .reply(.path(let i), let outcome):
            guard paths.indices.contains(i), let reply = ChangeSync.Event(reply: outcome) else { break }
            sync(i, reply, now, &out)
        case .timer:
            negotiate(.timer, now, &out)
            for i in paths.indices { sync(i, .timer, now, &out) }
        }
    }

    /// Steps the negotiator and passes its actions on, in order. Its step appends to a queue of
    /// ours, taken one by one here: through its own queue they were drained into an array made for
    /// every event. An event handled while the actions are taken (changes a fetch delivered) finds
    /// no queue kept and makes its own, so each event's actions stay together and in order.
    private mutating func negotiate(_ event: CallNegotiator.Event, _ now: Instant, _ out: inout OutputQueue<Action>) {
        var actions = negotiatorActions.take() ?? OutputQueue()
        negotiator.step(event, now: now, &actions)
        while let action = actions.pop() {
            switch action {
            case .modify, .lookup:
                guard let request = action.storeRequest(scope: binding.scope) else { break }
                requests.count(request)
                out.append(.store(request, origin: .negotiator(action)))
            case .fetchNow:
                for i in paths.indices { sync(i, .fetchNow, now, &out) }
            case .ice(let command):
                out.append(.ice(command))
            case .report(let state):
                out.append(.report(state))
                for i in paths.indices { sync(i, .negotiating(state.isNegotiating), now, &out) }
            case .rejected(let problem):
                out.append(.rejected(problem))
            case .remoteHungUp(let epoch, let type):
                out.append(.remoteHungUp(epoch: epoch, type))
            }
        }
        negotiatorActions = actions
    }

    /// Steps path `index` and passes its actions on, in order (taken as its step returns them, not
    /// queued in the path and drained into a second array).
    private mutating func sync(_ index: Int, _ event: ChangeSync.Event, _ now: Instant,
                               _ out: inout OutputQueue<Action>) {
        for action in paths[index].step(event, now: now) {
            switch action {
            case .fetchZoneChanges, .fetchDatabaseChanges:
                guard let request = action.storeRequest(zone: binding.zone, scope: binding.scope,
                                                        resultsLimit: configuration.timing.resultsLimit) else { break }
                requests.count(request)
                out.append(.store(request, origin: .path(index)))
            case .deliver(let changes):
                negotiate(.recordsFetched(changes.changed, deleted: changes.deleted.map(\.id)), now, &out)
            case .zoneUnavailable(let error):
                out.append(.zoneUnavailable(path: configuration.ingestion[index].name, error))
            }
        }
    }
}

/// Every counter of a peer's signaling, for reports and the legacy comparison.
public struct SignalingCounters: Hashable, Sendable, Codable {
    public var inbox: SignalInbox.Counters
    public var negotiator: CallNegotiator.Counters
    /// Summed over the ingestion paths.
    public var sync: ChangeSync.Counters
    public var garbageCollection: SignalGarbageCollector.Counters
    public var requests: CallSignaling.RequestCounts

    /// Records fetched, every path and version counted.
    public var recordsFetched: Int { sync.recordsFetched }
    /// Bytes of record data fetched.
    public var bytesFetched: Int { sync.bytesFetched }
    /// Store requests made.
    public var storeRequests: Int { requests.total }
    /// Records (and held chunks) dropped for a stale epoch.
    public var staleDrops: Int { inbox.staleDrops }
    /// Signal records dropped as malformed or refused (an epoch too far ahead, too many chunks).
    public var malformedRecords: Int { inbox.malformed }
    /// Record versions (or chunk seqs) seen twice.
    public var duplicates: Int { inbox.duplicates }
    /// Chunks held for their description.
    public var earlyCandidateHolds: Int { inbox.earlyCandidateHolds }
    /// Offers applied over a set remote description ("stale offer after RD").
    public var resets: Int { negotiator.resets }
    /// Records deleted by garbage collection.
    public var gcDeletions: Int { garbageCollection.deletions }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension CallSignaling: SansIOMachine {}
