// The store as a call finds it: the room set up by both peers (zone, share, members,
// subscriptions), their devices registered for push, and the records of earlier calls. Setting
// it up is the same for every trial of a configuration, so an experiment makes it once and
// each trial starts from a copy (`StoreEngine` is a value). With throttling or injected errors
// the engine carries a seeded generator, so each trial then makes its own scene.
import RecordStore
import Signaling
import ZoneCore

/// A room's store before a call, ready to be copied into trials.
public struct TrialScene: Sendable {
    /// The engine with the room and the old records.
    public let engine: StoreEngine
    /// Where each peer reaches the room.
    public let offerCreator: RoomBinding
    public let answerer: RoomBinding
    /// The epochs of the earlier calls whose records are in the zone.
    public let oldEpochs: [CallEpoch]

    /// Room each zone keeps for the records a call writes there (offers, answers, candidate
    /// chunks, acknowledgements: a few dozen; more only costs a rehash).
    static let recordsPerCall = 64

    /// Whether trials may share this scene: not when the engine draws injected errors from a
    /// generator each trial should have its own of.
    public var isShareable: Bool { engine.configuration.throttle.isOff }

    public init(configuration: TrialConfiguration, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var storeConfiguration = configuration.store
        storeConfiguration.throttle.seed = random.next()
        var engine = StoreEngine(configuration: storeConfiguration)
        let setupTime = CallTrial.start - .seconds(3600)
        let roomID = try RoomID(CallTrial.roomName)
        let (userA, userB) = CallTrial.users
        let bindingA = try Self.setUp(&engine, RoomSetup(roomID: roomID, role: .owner, myUserID: userA,
                                                         displayName: "A", roomName: "simulated"), now: setupTime)
        let bindingB = try Self.setUp(&engine, RoomSetup(roomID: roomID, role: .participant(ownerUserID: userA),
                                                         myUserID: userB, displayName: "B"), now: setupTime)
        for user in [userA, userB] {
            try engine.registerDevice(RequestContext(user: user, deviceID: CallTrial.device, now: setupTime))
        }
        let names = SignalRecordNames(sessionKey: try SessionKey(roomID: roomID, users: userA, userB))
        let previous = PreviousCalls(count: configuration.oldEpochs, names: names,
                                     offerCreator: (userA, bindingA.zone), answerer: (userB, bindingB.zone),
                                     before: CallTrial.start, random: &random)
        for (records, user, binding) in [(previous.byOfferCreator, userA, bindingA),
                                         (previous.byAnswerer, userB, bindingB)] where !records.isEmpty {
            let perRequest = storeConfiguration.maxItemsPerRequest
            for batch in stride(from: 0, to: records.count, by: perRequest) {
                let request = ModifyRecordsRequest(
                    operations: records[batch..<min(batch + perRequest, records.count)].map { .forceReplace($0) },
                    atomic: false)
                let outcome = Self.perform(&engine, StoreRequest(scope: binding.scope, .modifyRecords(request)),
                                           user: user, now: CallTrial.start - .seconds(60))
                if case .failed(let error) = outcome { throw error }
            }
        }
        _ = engine.drainNotifications()
        // Each trial's first write to a zone copies its tables from here: made with room for the
        // call's records, they need not grow in the trial.
        engine.reserveCapacity(recordsPerZone: Self.recordsPerCall)
        self.engine = engine
        offerCreator = bindingA
        answerer = bindingB
        oldEpochs = previous.epochs
    }

    /// One request outside any latency or fault; throttled or refused attempts are retried.
    private static func perform(_ engine: inout StoreEngine, _ request: StoreRequest, user: String,
                                now: Instant) -> StoreOutcome {
        var outcome = engine.perform(request, RequestContext(user: user, deviceID: CallTrial.device, now: now))
        var attempts = 0
        while case .failed(let error) = outcome, error.code.isRetryable, attempts < 100 {
            attempts += 1
            outcome = engine.perform(request, RequestContext(user: user, deviceID: CallTrial.device, now: now))
        }
        return outcome
    }

    /// Runs a room setup to its end.
    static func setUp(_ engine: inout StoreEngine, _ setup: RoomSetup, now: Instant) throws -> RoomBinding {
        var setup = setup
        setup.handle(.start, now: now)
        while let action = setup.pollOutput() {
            switch action {
            case .store(let request):
                setup.handle(.outcome(perform(&engine, request, user: setup.myUserID, now: now)), now: now)
            case .ready(let binding):
                return binding
            case .failed(let error):
                throw error
            }
        }
        throw StoreError(.internalError, "room setup stopped without an answer")
    }
}
