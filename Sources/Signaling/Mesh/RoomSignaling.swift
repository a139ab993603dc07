// One peer's signaling in a room's group call (docs/PROTOCOL.md §11): a mesh of pairs, one leg
// per remote member, each leg negotiated by the `CallNegotiator` a call of two uses. Composed of
// small machines, still sans-I/O:
//   - the ingestion paths (`ChangeSync`), one set for the whole room, shared by every leg;
//   - our presence record (`OwnPresence`) and the others' (`Roster`);
//   - the legs (`RoomLeg`: a negotiator each), started and ended by the presence records;
//   - the collector of pairs nobody has a leg for (`PairCollector`).
// Fetched records are routed to their pair's leg by the session key field before any payload is
// read; the legs' store requests of one event go out batched (`LegRequestBatch`). The extensions
// hold the flows: `+Routing` (what fetches bring), `+Legs` (starting, stepping and ending legs),
// `+Membership` (joining, the roster, the limit, leaving), `+PairPeers` (calls of two in the room).
import RecordStore
import ZoneCore

/// The signaling side of a room's group call, for one peer: no I/O.
public struct RoomSignaling: Sendable {
    /// Actions handled but not yet polled.
    private var pendingOutputs = OutputQueue<Action>()

    /// What happens to the peer's signaling.
    public enum Event: Sendable {
        /// Join the room's call: save our presence, start fetching.
        case join
        /// Leave the call: every leg ends, our records go.
        case leave
        /// Remove a member from the call (the room's owner only): its presence record is deleted.
        case remove(userID: String)
        /// Start a new epoch of one leg (an ICE restart of that pair only).
        case restart(remote: String)
        /// A leg's call ended by itself (its media timed out, its ICE restarts ran out): the room ends
        /// that leg; the member gets a new one only by rejoining (a new member session) or offering.
        case legFinished(remote: String, detail: String)
        /// A leg's remote said goodbye on the leg's path, which the leg checked (docs/PROTOCOL.md §11.4):
        /// the room ends that leg at once, before its departure reaches us through the store; that member
        /// session gets no new leg.
        case remoteSaidGoodbye(remote: String)
        /// A push notification reached the device.
        case notification(PushNotification)
        /// What legs' ICE agents reported, in order: a driver hands in together what its agents said in
        /// one step, so the chunk saves of legs that gathered together go out in one `records/modify`
        /// (§11.3).
        case iceReports([(remote: String, event: ICEEvent)])
        /// A store request's outcome.
        indirect case reply(Origin, StoreOutcome)
        /// Records learned some other way (tests choose their order of arrival with this).
        case fetched([Record], deleted: [RecordID])
        /// Time passed.
        case timer
    }

    /// Which part of the room a store request belongs to; the driver hands it back with the outcome.
    public enum Origin: Hashable, Sendable {
        /// Requests of one or more legs: the outcome is split among them by record name.
        case legs([LegRequest])
        /// Our presence record's save.
        case presence
        /// Ingestion path `index`.
        case path(Int)
        /// Deletions nothing but leaving waits for: farewells of ended legs, our departure, pairs
        /// collected, expired members' records, members removed.
        case cleanup
    }

    /// What the driver must do or hear.
    public enum Action: Hashable, Sendable {
        /// Make the request and reply with `.reply(origin, outcome)`.
        indirect case store(StoreRequest, origin: Origin)
        /// We are a member: our presence is saved and the room's records read.
        case joined
        /// The members present, this peer included, in join order (on every change).
        case roster([CallMember])
        /// A leg starts: give it an ICE agent (and media); its commands follow as `.ice`.
        indirect case legStarted(LegStart)
        /// Tell a leg's ICE agent.
        case ice(remote: String, ICECommand)
        /// A leg's call state changed.
        case report(remote: String, CallState)
        /// A leg ended; its ICE agent was told to close. Its counters at the end.
        indirect case legEnded(LegID, LegEndReason, SignalingCounters)
        /// A member (or a caller) is beyond the room's limit: no leg with it.
        case beyondLimit(userID: String, rank: Int, limit: Int)
        /// A record another user wrote was dropped (malformed, forged, refused): log it. `remote` is
        /// the leg it was for, if any.
        indirect case rejected(remote: String?, SignalInbox.Problem)
        /// An ingestion path stopped: the zone is gone or access was lost.
        indirect case zoneUnavailable(path: String, StoreError)
        /// We left the room, and every deletion of our leaving was answered.
        case left(LeaveReason)
    }

    /// Where the peer stands in the room.
    public enum State: Hashable, Sendable {
        /// Not joined.
        case idle
        /// Our presence is being saved and the room's records read.
        case joining
        /// A member: legs start and end as members come and go.
        case joined
        /// Our records are being deleted.
        case leaving(LeaveReason)
        /// Gone.
        case left(LeaveReason)
    }

    /// What the room did (each leg counts its own negotiation: `legCounters`).
    public struct Counters: Hashable, Sendable, Codable {
        /// Member sessions seen joining (rejoins included).
        public var membersJoined = 0
        /// Members whose presence record was deleted.
        public var membersLeft = 0
        /// Members whose presence expired.
        public var membersExpired = 0
        /// Members seen with a new member session.
        public var rejoins = 0
        /// Presence record versions dropped as malformed or forged.
        public var memberRecordsRefused = 0
        /// Members and callers refused for the room's limit.
        public var beyondLimit = 0
        /// Legs started.
        public var legsStarted = 0
        /// Legs ended.
        public var legsEnded = 0
        /// Offers made because the expected offer did not come.
        public var fallbackOffers = 0
        /// Legs ended unanswered.
        public var unanswered = 0
        /// Offers from users without a presence record that started a leg (the offer proves presence).
        public var callersAnswered = 0
        /// Calls-of-two peers called on their fresh `RoomMember` record.
        public var pairPeersCalled = 0
        /// Signal records whose last writer is not their owner: dropped unread.
        public var forgedRecords = 0
        /// Signal records routed to a leg.
        public var routedRecords = 0
        /// Signal records of pairs we have no leg for (kept by name only for collection, never parsed).
        public var otherPairRecords = 0
        /// Records that arrived while joining and could not be held (too many).
        public var heldOverflow = 0
        /// Leg requests that went out inside another leg's store request.
        public var batchedLegRequests = 0
        /// Records deleted by farewells, our departure, pair collection and expired members.
        public var cleanupDeletions = 0
        /// Presence saves made (join and refreshes).
        public var presenceSaves = 0
        /// Presence saves that failed (each retried).
        public var presenceFailures = 0
        /// Legs' first lookups answered from the records the change feed brought, without a round trip.
        public var lookupsFromFeed = 0

        public init() {}
    }

    public let configuration: RoomSignalingConfiguration
    public let binding: RoomBinding
    public let myUserID: String
    public internal(set) var state: State = .idle
    public internal(set) var paths: [ChangeSync]
    public internal(set) var counters = Counters()
    /// Store requests asked for, by kind (every leg's and the room's own).
    public internal(set) var requests = CallSignaling.RequestCounts()
    /// The device's epoch clock: every leg's epochs, so a new leg's epochs exceed all before it.
    public internal(set) var epochClock: EpochClock
    /// When the machine next needs a `.timer`, worked out at the end of every event.
    public private(set) var nextDeadline: Instant?

    var presence: OwnPresence
    var roster = Roster()
    /// The legs, by remote user ID.
    var legs: [String: RoomLeg] = [:]
    /// The remote user of each leg's session key.
    var legByKey: [String: String] = [:]
    var generation = 0
    var random: SeededRandom
    /// Deliveries that came while joining, routed once joined.
    var held: [(records: [Record], deleted: [DeletedRecord])] = []
    var heldRecords = 0
    /// Whether the first fetch (the catch-up) has finished.
    var caughtUp = false
    /// Fetches finished (no more pages), to tell a fetch begun after a moment from one before it.
    var fetchesFinished = 0
    var pairPeers: [String: PairPeerCandidate] = [:]
    var pairs: PairCollector
    /// Our pairs' session records and envelopes as fetched, for the legs' first lookups.
    var pairRecords = PairRecordCache()
    var nextSweep: Instant?
    var cleanupInFlight = 0
    /// Leg requests of the event being handled, sent together at its end.
    var gathered: [LegRequest] = []
    /// Deletions of the event being handled, sent together at its end.
    var cleanup: [RecordID] = []
    /// Whether we are joining or any leg negotiates (the paths poll faster then).
    var negotiating = false
    /// Members reported beyond the limit, by user and member session, so each is reported once.
    var reportedBeyondLimit: Set<String> = []
    /// The members present in the last roster reported.
    var lastRoster: [CallMember] = []
    /// Member sessions a leg with ended unanswered or by itself, as "user session": no leg starts with
    /// them again unless they offer (a new member session may).
    var finishedSessions: Set<String> = []
    /// When we joined, and whether any leg has started since: a member that expects others gives up
    /// after `configuration.aloneTimeout` without any.
    var joinedAt: Instant?
    var everHadLeg = false
    /// When our last leg with each user ended, milliseconds since 1970: an offer older than that
    /// belongs to the ended leg (a full scan brings it again) and starts nothing.
    var legEndedAtMs: [String: Int64] = [:]

    /// Records held at most while joining.
    static let maxHeldRecords = 10_000

    /// A peer `myUserID` in the room `binding` names. `epochClock` carries the device's last epoch;
    /// `seed` draws the member session and each leg's credentials; `tokens` restores the change tokens
    /// a previous run kept, path by path.
    public init(configuration: RoomSignalingConfiguration = RoomSignalingConfiguration(), binding: RoomBinding,
                myUserID: String, epochClock: EpochClock = EpochClock(), seed: UInt64,
                tokens: [CallSignaling.SyncTokens] = [], now: Instant) throws(SignalRecordError) {
        try SessionKey.validate(userID: myUserID)
        self.configuration = configuration
        self.binding = binding
        self.myUserID = myUserID
        self.epochClock = epochClock
        var random = SeededRandom(seed: seed)
        let nowMs = now.millisecondsSinceEpoch
        let me = CallMember(roomID: binding.roomID.rawValue, userID: myUserID, memberSession: random.hex128(),
                            joinedAtMs: nowMs, expiresAtMs: nowMs.addingSaturated(configuration.presence.ttl
                                .wholeMilliseconds))
        self.random = random
        presence = OwnPresence(member: me, zone: binding.zone, policy: configuration.presence)
        pairs = PairCollector(roomID: binding.roomID)
        let signaling = configuration.signaling
        paths = signaling.ingestion.enumerated().map { index, path in
            let kept = index < tokens.count ? tokens[index] : CallSignaling.SyncTokens()
            return ChangeSync(strategy: path.strategy, timing: signaling.timing, zone: binding.zone,
                              scope: binding.scope, pollsOnlyWhileNegotiating: path.pollsOnlyWhileNegotiating,
                              pushFetchesZone: path.pushFetchesZone, zoneToken: kept.zone,
                              databaseToken: kept.database)
        }
        updateDeadline(now: now)
    }

    /// Our member record (session, join time, latest expiry).
    public var me: CallMember { presence.member }

    /// The members present at `now`, this peer included when joined, in join order.
    public func members(now: Instant) -> [CallMember] {
        var all = roster.present(now: now)
        if state == .joined { all.append(presence.member) }
        return all.sorted { JoinOrder($0) < JoinOrder($1) }
    }

    /// The legs now, by remote user ID.
    public var legIDs: [LegID] { legs.values.map(\.id).sorted { $0.generation < $1.generation } }

    /// The negotiator of the leg with `remote`, if there is one.
    public func negotiator(of remote: String) -> CallNegotiator? { legs[remote]?.negotiator }

    /// The counters of the leg with `remote`: its inbox, negotiation, garbage collection and store
    /// requests (the fetches are the room's: `requests`).
    public func legCounters(_ remote: String) -> SignalingCounters? {
        legs[remote].map { Self.counters(of: $0) }
    }

    static func counters(of leg: RoomLeg) -> SignalingCounters {
        SignalingCounters(inbox: leg.negotiator.inbox.counters, negotiator: leg.negotiator.counters,
                          sync: ChangeSync.Counters(), garbageCollection: leg.negotiator.collector?.counters ?? .init(),
                          requests: leg.requests)
    }

    /// The change tokens of every path now.
    public var tokens: [CallSignaling.SyncTokens] {
        paths.map { CallSignaling.SyncTokens(zone: $0.zoneToken, database: $0.databaseToken) }
    }

    /// Feeds one event at `now`; what it causes waits in `pollOutput()`, in order.
    public mutating func handle(_ event: Event, now: Instant) {
        var out = pendingOutputs
        pendingOutputs = OutputQueue(capacity: 0)
        step(event, now: now, &out)
        flush(now: now, &out)
        pendingOutputs = out
        updateDeadline(now: now)
    }

    /// The oldest action not yet taken, or nil until the next event.
    public mutating func pollOutput() -> Action? { pendingOutputs.pop() }

    private mutating func step(_ event: Event, now: Instant, _ out: inout OutputQueue<Action>) {
        if case .left = state {
            if case .reply(.cleanup, let outcome) = event { cleanupAnswered(outcome) }
            return
        }
        switch event {
        case .join:
            join(now: now, &out)
        case .leave:
            leave(.requested, now: now, &out)
        case .remove(let user):
            remove(user, &out)
        case .restart(let remote):
            negotiate(remote, .restart, now: now, &out)
        case .legFinished(let remote, let detail):
            if let session = legs[remote]?.memberSession { finishedSessions.insert("\(remote) \(session)") }
            endLeg(remote, .callEnded(detail), now: now, &out)
        case .remoteSaidGoodbye(let remote):
            if let session = legs[remote]?.memberSession { finishedSessions.insert("\(remote) \(session)") }
            endLeg(remote, .remoteSaidGoodbye, now: now, &out)
        case .notification(let note):
            guard state == .joining || state == .joined else { return }
            for i in paths.indices { sync(i, .notification(note), now, &out) }
        case .iceReports(let reports):
            for report in reports { iceReported(report.remote, report.event, now: now, &out) }
        case .fetched(let records, let deleted):
            delivered(records, deleted: deleted.map { DeletedRecord(id: $0, recordType: "") }, now: now, &out)
        case .reply(let origin, let outcome):
            replied(origin, outcome, now: now, &out)
        case .timer:
            timer(now: now, &out)
        }
    }

    private mutating func replied(_ origin: Origin, _ outcome: StoreOutcome, now: Instant,
                                  _ out: inout OutputQueue<Action>) {
        switch origin {
        case .legs(let requests):
            for (request, event) in LegRequestBatch.split(outcome, among: requests)
            where legs[request.leg.remote]?.id == request.leg {
                negotiate(request.leg.remote, event, now: now, &out)
            }
        case .presence:
            presenceAnswered(outcome, now: now, &out)
        case .path(let i):
            guard paths.indices.contains(i), let reply = ChangeSync.Event(reply: outcome) else { return }
            sync(i, reply, now, &out)
        case .cleanup:
            cleanupAnswered(outcome)
            if case .leaving(let reason) = state, cleanupInFlight == 0 { finishLeaving(reason, &out) }
        }
    }

    private mutating func timer(now: Instant, _ out: inout OutputQueue<Action>) {
        for remote in legs.keys.sorted() { negotiate(remote, .timer, now: now, &out) }
        if state == .joined {
            legTimers(now: now, &out)
            membershipTimers(now: now, &out)
            pairPeerTimers(now: now, &out)
        }
        if let request = presence.due(now: now) { sendPresence(request, &out) }
        guard state == .joining || state == .joined else { return }
        for i in paths.indices { sync(i, .timer, now, &out) }
    }

    /// Steps path `index` and passes its actions on.
    mutating func sync(_ index: Int, _ event: ChangeSync.Event, _ now: Instant, _ out: inout OutputQueue<Action>) {
        for action in paths[index].step(event, now: now) {
            switch action {
            case .fetchZoneChanges, .fetchDatabaseChanges:
                guard let request = action.storeRequest(
                    zone: binding.zone, scope: binding.scope, resultsLimit: configuration.signaling.timing.resultsLimit)
                else { break }
                requests.count(request)
                out.append(.store(request, origin: .path(index)))
            case .deliver(let changes):
                if !changes.moreComing { fetchesFinished += 1 }
                delivered(changes.changed, deleted: changes.deleted, now: now, &out)
                if !changes.moreComing && !caughtUp {
                    caughtUp = true
                    joinIfReady(now: now, &out)
                }
            case .zoneUnavailable(let error):
                out.append(.zoneUnavailable(path: configuration.signaling.ingestion[index].name, error))
                leave(.zoneUnavailable(error), now: now, &out)
            }
        }
    }

    /// Fetch now on every path (a leg expects something, or a decision waits for fresh changes).
    mutating func fetchNow(now: Instant, _ out: inout OutputQueue<Action>) {
        for i in paths.indices { sync(i, .fetchNow, now, &out) }
    }

    /// Sends what the event gathered: the legs' requests batched, the deletions in requests of at most
    /// 200 (`forceDelete`, not atomic: a record someone else deleted first must not keep the others);
    /// then tells the paths whether any leg negotiates.
    private mutating func flush(now: Instant, _ out: inout OutputQueue<Action>) {
        if !gathered.isEmpty {
            let batches = LegRequestBatch.batches(gathered, scope: binding.scope)
            counters.batchedLegRequests += gathered.count - batches.count
            gathered = []
            for (request, carried) in batches {
                requests.count(request)
                out.append(.store(request, origin: .legs(carried)))
            }
        }
        if !cleanup.isEmpty {
            let doomed = cleanup
            cleanup = []
            for start in stride(from: 0, to: doomed.count, by: LegRequestBatch.maxOperations) {
                let part = Array(doomed[start..<min(start + LegRequestBatch.maxOperations, doomed.count)])
                let request = StoreRequest(scope: binding.scope, .modifyRecords(ModifyRecordsRequest(
                    operations: part.map { .forceDelete($0) }, atomic: false)))
                requests.count(request)
                cleanupInFlight += 1
                out.append(.store(request, origin: .cleanup))
            }
        }
        // Joining counts: the legs start once it is done, and the member that will wait for an offer then
        // polls 2 s after its join, as a call of two's answerer does after its start (§11.1).
        let nowNegotiating = state == .joining
            || state == .joined && legs.values.contains { $0.negotiator.state.isNegotiating }
        if nowNegotiating != negotiating {
            negotiating = nowNegotiating
            for i in paths.indices { sync(i, .negotiating(nowNegotiating), now, &out) }
        }
        if case .leaving(let reason) = state, cleanupInFlight == 0 { finishLeaving(reason, &out) }
    }

    private mutating func cleanupAnswered(_ outcome: StoreOutcome) {
        cleanupInFlight = max(0, cleanupInFlight - 1)
        if case .modified(let result) = outcome {
            for item in result.results {
                if case .deleted = item { counters.cleanupDeletions += 1 }
            }
        }
    }

    private mutating func updateDeadline(now: Instant) {
        var next: Instant?
        switch state {
        case .left:
            nextDeadline = nil
            return
        case .idle, .joining, .joined, .leaving:
            break
        }
        for leg in legs.values {
            next = .earliest(next, leg.negotiator.nextDeadline)
            if let since = leg.waitingSince {
                let bound = leg.memberSession != nil && !leg.fellBack && leg.negotiator.state == .waitingForOffer
                    ? configuration.offerFallback : configuration.answerTimeout
                next = .earliest(next, since + bound)
            }
        }
        next = .earliest(next, presence.nextDeadline)
        if state == .joined {
            next = .earliest(next, roster.nextExpiry)
            if let bound = configuration.aloneTimeout, !everHadLeg, let joinedAt { next = .earliest(next, joinedAt + bound) }
            for candidate in pairPeers.values { next = .earliest(next, candidate.due) }
            next = .earliest(next, nextSweep)
        }
        if state == .joining || state == .joined {
            for i in paths.indices { next = .earliest(next, paths[i].nextDeadline) }
        }
        nextDeadline = next
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension RoomSignaling: SansIOMachine {}
