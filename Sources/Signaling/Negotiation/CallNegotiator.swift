// The call negotiator of spec §3–4: one per (room, remote user). A sans-I/O machine: events in
// with `now`, actions out; it never awaits the store. It owns the session's inbox (spec §5) and
// its garbage collector (spec §3), and keeps epochs, roles and the perfect-negotiation state.
//
// The extensions hold the flows: `+Local` (starting calls and epochs, our candidates),
// `+Remote` (what the inbox delivers), `+Saves` (save and delete results, conflicts, retries).
import RecordStore
import SDP
import ZoneCore

/// Negotiates one call through signal records.
public struct CallNegotiator: Sendable {
    /// Actions handled but not yet polled.
    private var pendingOutputs = OutputQueue<Action>()

    /// How the negotiator behaves.
    public struct Configuration: Hashable, Sendable {
        /// The stale-epoch protections (all on unless measuring the legacy design).
        public var protections: SignalingProtections = .all
        /// Garbage collection, or nil for none.
        public var garbageCollection: GarbageCollectionPolicy? = .default
        /// Saves of the session record after `serverRecordChanged` before giving up (spec §3,
        /// "retries (bounded)").
        public var sessionSaveAttempts = 5
        /// The first wait before retrying a refused save (`zoneBusy`, or no `retryAfter`); doubled.
        public var retryBase: Duration = .seconds(1)
        /// The longest wait before retrying a save.
        public var retryCap: Duration = .seconds(60)
        /// Our codecs, in order of preference.
        public var codecs: [RTPCodec] = [.vp8(), .h264()]
        /// DTLS-SRTP parameters for our descriptions; nil for plain RTP.
        public var dtls: SilentVideoConfiguration.DTLS?
        /// Attributes added to our video section of every description (the media layer's own).
        public var mediaAttributes: [SDPAttribute] = []
        /// `b=` lines of our video section in every description (RFC 8866 §5.8): in a group call each
        /// leg's `AS` share of the uplink.
        public var bandwidths: [SDPBandwidth] = []
        /// The SDP dialect of our descriptions: today's (`.zonertc`) or the browsers'
        /// (`.webRTC`, what `MediaSecurity.dtlsSRTP.dialect` gives).
        public var dialect: SDPDialect = .zonertc
        /// The identity of the stream we send, announced in the browsers' dialect.
        public var source: VideoSourceIdentity?
        /// What we do with video (RFC 3264 §5.1, §6.1): an answer to a browser's sendrecv offer from a peer
        /// that only records must say recvonly, or the browser waits for a track that never comes.
        public var direction: MediaDirection = .sendReceive
        /// Whether the offer creator starts a new epoch by itself when ICE fails.
        public var restartOnICEFailure = true
        /// How far ahead of this device's clock a remote epoch may be: records beyond are refused
        /// as malformed (an epoch near `Int64.max` would leave no room for any later epoch).
        public var maxEpochLead: Duration = .seconds(86_400)
        /// Payloads shared with the other negotiators of this process (the simulator's two peers),
        /// so an envelope or chunk one of them printed is not parsed by the other; nil for none.
        public var payloads: SignalPayloadCache?

        public init() {}
    }

    /// What the negotiator did: the stale-epoch regressions show here.
    public struct Counters: Hashable, Sendable, Codable {
        /// Epochs this peer started (first offers and restarts).
        public var epochsStarted = 0
        /// Higher-epoch offers from the remote peer adopted while an epoch was active.
        public var remoteRestarts = 0
        /// Remote offers and answers applied.
        public var descriptionsApplied = 0
        /// Remote candidates applied.
        public var candidatesApplied = 0
        /// Remote offers applied although a remote description of the same or a later epoch was
        /// set: the reference design's "stale offer after RD" reset.
        public var resets = 0
        /// Descriptions or candidates applied a second time.
        public var duplicateApplies = 0
        /// Repeated offers or answers of an epoch already set (or answered) that were ignored.
        public var repeatedDescriptionsIgnored = 0
        /// Colliding offers ignored (impolite peer).
        public var glareIgnored = 0
        /// Own offers rolled back for a colliding one (polite peer).
        public var glareYielded = 0
        /// Own epochs abandoned for a higher (or, on a tie, the offer creator's) epoch.
        public var epochsAbandoned = 0
        /// `serverRecordChanged` on the session record, merged by the maximum epoch.
        public var sessionConflicts = 0
        /// Saves retried after throttling, `zoneBusy` or a conflict.
        public var saveRetries = 0
        /// Saves given up.
        public var saveFailures = 0
        /// Local candidates not sent because their epoch was no longer active.
        public var localCandidatesDropped = 0
        /// Offers we could not answer (no common codec, …).
        public var negotiationFailures = 0

        public init() {}
    }

    /// What happens to the negotiator.
    public enum Event: Hashable, Sendable {
        /// The user starts the call (both peers do).
        case startCall
        /// Start a new epoch: an ICE restart (RFC 8445 §9), from either side.
        case restart
        /// The user hangs up.
        case hangUp
        /// Records fetched by any ingestion path, with the deletions it reported.
        case recordsFetched([Record], deleted: [RecordID])
        /// The answer to a `lookup` action.
        case lookedUp([LookupResult])
        /// The per-item outcome of a `modify` action (`serverRecordChanged` among them).
        case modified(ModifyRecordsResult)
        /// A `modify` or `lookup` action failed as a whole. Indirect: large, and rare beside the
        /// other events.
        indirect case requestFailed(Action, StoreError)
        /// The ICE agent reports.
        case ice(ICEEvent)
        /// Time passed: retries and garbage collection may be due.
        case timer
    }

    /// What the negotiator asks for.
    public enum Action: Hashable, Sendable {
        /// Save and delete records in one `records/modify` request; which operation each record
        /// write uses, and why, is docs/PROTOCOL.md §4.3.
        case modify([RecordOperation], atomic: Bool)
        /// Fetch records by name (no query: spec §2).
        case lookup([RecordID])
        /// Fetch changes now, whatever the sync strategy's timing.
        case fetchNow
        /// Tell the ICE agent.
        case ice(ICECommand)
        /// The call's state changed.
        case report(CallState)
        /// A record the remote peer wrote was dropped (malformed or refused): log it. Indirect:
        /// large, and rare beside the other actions.
        indirect case rejected(SignalInbox.Problem)
        /// The remote peer hung up: its description of the active epoch (of this type) left the
        /// zone, which only its goodbye does (docs/PROTOCOL.md §7).
        case remoteHungUp(epoch: CallEpoch, EnvelopeType)
    }

    /// What an in-flight save is.
    enum SaveKind: Hashable, Sendable {
        /// Our offer of the epoch (published with the session record).
        case offer(CallEpoch)
        /// Our answer of the epoch.
        case answer(CallEpoch)
        /// The session record naming the epoch.
        case session(CallEpoch)
        /// One of our candidate chunks of the epoch.
        case chunk(CallEpoch)

        var epoch: CallEpoch {
            switch self {
            case .offer(let e), .answer(let e), .session(let e), .chunk(let e): return e
            }
        }
    }

    /// A save in flight: what it is and the record sent (to retry it).
    struct PendingSave: Hashable, Sendable {
        var kind: SaveKind
        var record: Record
    }

    /// Saves in flight, found by their record's name: a short list (a call has a few in flight at
    /// once) searched by comparing names, rather than a dictionary hashing names of 100+ characters
    /// on every save and every reply. Only found by name, never walked, so the order kept in makes
    /// no difference.
    struct PendingSaves: Sendable {
        private var entries: [PendingSave] = []

        private func index(of recordName: String) -> Int? {
            entries.firstIndex { $0.record.id.recordName == recordName }
        }

        /// The save of the record named `recordName`; setting one replaces the save of that name.
        subscript(recordName: String) -> PendingSave? {
            get { index(of: recordName).map { entries[$0] } }
            set {
                switch (index(of: recordName), newValue) {
                case let (index?, save?): entries[index] = save
                case let (index?, nil): entries.remove(at: index)
                case let (nil, save?): entries.append(save)
                case (nil, nil): break
                }
            }
        }

        /// Takes the save of the record named `recordName` out, if there is one.
        mutating func removeValue(forKey recordName: String) -> PendingSave? {
            guard let index = index(of: recordName) else { return nil }
            return entries.remove(at: index)
        }
    }

    public let configuration: Configuration
    public let roles: PeerRoles
    public let sessionKey: SessionKey
    public let names: SignalRecordNames
    public let myUserID: String
    public let remoteUserID: String
    /// The room's zone, owner resolved, as this peer reaches it.
    public let zone: ZoneID

    public internal(set) var state: CallState = .idle
    /// The device's epoch clock (hand it to the next call's negotiator).
    public internal(set) var epochClock: EpochClock
    /// The epoch being negotiated or connected.
    public internal(set) var activeEpoch: CallEpoch?
    /// The last epoch ICE connected on.
    public internal(set) var connectedEpoch: CallEpoch?
    public internal(set) var negotiation: PerfectNegotiation
    public internal(set) var inbox: SignalInbox
    public internal(set) var collector: SignalGarbageCollector?
    public internal(set) var counters = Counters()

    var random: SeededRandom
    let mediaSessionID: UInt64
    var sessionVersion: UInt64 = 1
    /// Our ICE credentials of the active epoch.
    var localCredentials: ICECredentials?
    /// The next seq of our chunks of the active epoch.
    var localChunkSeq: Int64 = 0
    /// The latest version of the session record we know (for its change tag).
    var sessionRecord: Record?
    var sessionSaveAttempts = 0
    /// Remote descriptions applied, per epoch.
    var remoteDescriptions: [CallEpoch: Set<EnvelopeType>] = [:]
    /// Epochs this device answered (its answer record exists).
    var answeredEpochs: Set<CallEpoch> = []
    /// Remote candidates applied, by epoch (to count duplicate applies). Kept as values, not as
    /// printed text: printing every candidate again only to hash the text cost more than applying it.
    /// Room for a call's candidates from the start, so the set is not rehashed as the first ones come.
    var appliedCandidates = Set<AppliedCandidate>(minimumCapacity: 16)
    struct AppliedCandidate: Hashable {
        var epoch: CallEpoch
        var candidate: ICECandidate
    }
    /// Saves in flight, by record name.
    var saves = PendingSaves()
    /// Requests to send again once their time has come.
    var retries: [(at: Instant, action: Action)] = []
    var retryAttempt = 0
    /// Deliveries that came before the call started, replayed once it has.
    var deferred: [SignalInbox.Delivery] = []
    /// While preparing, the session's epoch whose answer is being looked up (docs/PROTOCOL.md §5: an
    /// epoch already answered is a finished negotiation, not one to join).
    var answerCheck: CallEpoch?

    /// A negotiator for the call between `myUserID` and `remoteUserID` in `roomID`, whose zone
    /// this peer reaches as `zone`. `seed` makes credentials and chunk names reproducible.
    /// `makesFirstOffer` says whether this peer offers first (nil: the offer creator, as in a call
    /// of two; a group call decides it by the join order).
    public init(roomID: RoomID, myUserID: String, remoteUserID: String, zone: ZoneID,
                epochClock: EpochClock = EpochClock(), configuration: Configuration = Configuration(),
                seed: UInt64, makesFirstOffer: Bool? = nil) throws(SignalRecordError) {
        let sessionKey = try SessionKey(roomID: roomID, users: myUserID, remoteUserID)
        self.sessionKey = sessionKey
        names = SignalRecordNames(sessionKey: sessionKey)
        roles = PeerRoles(myUserID: myUserID, remoteUserID: remoteUserID, makesFirstOffer: makesFirstOffer)
        self.myUserID = myUserID
        self.remoteUserID = remoteUserID
        self.zone = zone
        self.epochClock = epochClock
        self.configuration = configuration
        negotiation = PerfectNegotiation(polite: roles.isPolite)
        inbox = SignalInbox(myUserID: myUserID, remoteUserID: remoteUserID, sessionKey: sessionKey.rawValue,
                            protections: configuration.protections, maxEpochLead: configuration.maxEpochLead,
                            payloads: configuration.payloads)
        collector = configuration.garbageCollection.map { SignalGarbageCollector(myUserID: myUserID, policy: $0) }
        random = SeededRandom(seed: seed)
        mediaSessionID = random.next() >> 1
    }

    /// When the negotiator next needs a `.timer`.
    public var nextDeadline: Instant? {
        var retry: Instant?
        for r in retries { retry = .earliest(retry, r.at) }
        guard state != .idle && state != .ended else { return retry }
        return .earliest(retry, collector?.nextDeadline)
    }

    var protections: SignalingProtections { configuration.protections }

    /// Handles one event; returns the actions to carry out, in order.
    /// Feeds one event at `now`; the actions it causes wait in `pollOutput()`, in order.
    public mutating func handle(_ event: Event, now: Instant) {
        // The step appends to the queue itself, moved out and back: no array is made per event.
        var out = pendingOutputs
        pendingOutputs = OutputQueue(capacity: 0)
        step(event, now: now, &out)
        pendingOutputs = out
    }

    /// The oldest action not yet taken, or nil until the next event.
    public mutating func pollOutput() -> Action? { pendingOutputs.pop() }

    /// Appends one event's actions to `out`, in order (`CallSignaling` steps its negotiator this way).
    mutating func step(_ event: Event, now: Instant, _ out: inout OutputQueue<Action>) {
        let before = state
        switch event {
        case .startCall: startCall(now: now, &out)
        case .restart: restart(now: now, &out)
        case .hangUp: hangUp(&out)
        case .recordsFetched(let records, let deleted): recordsFetched(records, deleted: deleted, now: now, &out)
        case .lookedUp(let results): sessionLookedUp(results, now: now, &out)
        case .modified(let result): modified(result, now: now, &out)
        case .requestFailed(let action, let error): requestFailed(action, error, now: now, &out)
        case .ice(let ice): iceEvent(ice, now: now, &out)
        case .timer: timer(now: now, &out)
        }
        collectGarbage(now: now, &out)
        if state != before { out.append(.report(state)) }
    }

    // MARK: Shared helpers

    /// A record ID in our zone.
    func recordID(_ name: String) -> RecordID { RecordID(recordName: name, zoneID: zone) }

    /// How `record` is saved: with conflicts resolved, created when it carries no change tag (a new
    /// name: an envelope, a chunk, the first session record) and replaced, conditionally, when it
    /// does (every field of ours is written each time, so the record becomes exactly ours); without,
    /// replaced whatever the server holds (the last writer wins, as the reference design did).
    func saveOperation(_ record: Record) -> RecordOperation {
        guard protections.resolveConflicts else { return .forceReplace(record) }
        return record.recordChangeTag == nil ? .create(record) : .replace(record)
    }

    /// Garbage collection's deletions: whatever version the server holds (a record of an old epoch is
    /// never changed again, and `NOT_FOUND` means someone else deleted it first).
    static func deletions(_ batch: [RecordID]) -> Action { .modify(batch.map { .forceDelete($0) }, atomic: false) }

    /// Our media parameters for a description of the active epoch.
    mutating func mediaConfiguration(_ credentials: ICECredentials) -> SilentVideoConfiguration {
        sessionVersion += 1
        var media = SilentVideoConfiguration(sessionID: mediaSessionID, sessionVersion: sessionVersion,
                                             iceCredentials: credentials, codecs: configuration.codecs,
                                             dtls: configuration.dtls)
        media.extraAttributes = configuration.mediaAttributes
        media.bandwidths = configuration.bandwidths
        media.dialect = configuration.dialect
        media.source = configuration.source
        media.direction = configuration.direction
        return media
    }

    /// The first usable video section's ICE ufrag of a description.
    static func ufrag(of description: SessionDescription) -> String? {
        for section in description.media where section.kind == .video && !section.isRejected {
            if let ufrag = description.iceCredentials(for: section)?.usernameFragment { return ufrag }
        }
        return nil
    }

    /// A fresh chunk uuid (lower-case hex, 32 characters, from the seeded generator).
    mutating func chunkUUID() -> String { random.hex128() }

    /// Deletions that are due, each batch a request of its own: nothing waits for them.
    mutating func collectGarbage(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state != .idle else { return }
        let batches = collector?.sweep(now: now, activeEpoch: activeEpoch, connectedEpoch: connectedEpoch) ?? []
        for batch in batches {
            out.append(Self.deletions(batch))
        }
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension CallNegotiator: SansIOMachine {}
