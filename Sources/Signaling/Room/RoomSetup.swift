// Setting a room up, spec §1 and §6, after the reference design's share flow (seed 001,
// "共有作成" / "共有受諾"): the owner creates the zone, the `Room` record and the zone-wide
// share; a participant accepts the share (one accept function, idempotent: concern D); each
// saves its `RoomMember` record and a database subscription, and resolves its database once.
import RecordStore
import ZoneCore

/// The steps of joining or creating a room, as a sans-I/O machine (`SansIOMachine`): feed
/// `.start`, then each store request's outcome, until it hands out `ready` or `failed`. Running it
/// again is harmless: every step accepts "already done". It keeps no time and sets no deadline.
public struct RoomSetup: Sendable {
    /// What happened.
    public enum Input: Hashable, Sendable {
        /// Begin: the first request follows.
        case start
        /// The outcome of the last store request handed out.
        case outcome(StoreOutcome)
    }

    /// What the setup asks for.
    public enum Action: Hashable, Sendable {
        /// Make this store request and feed its outcome back.
        case store(StoreRequest)
        /// Done: where this peer reaches the room.
        case ready(RoomBinding)
        /// A step failed; starting over is safe.
        case failed(StoreError)
    }

    private enum Step: Hashable, Sendable {
        case notStarted, createZone, saveRecords, createShare, acceptShare, subscribe, done
    }

    public let binding: RoomBinding
    public let role: RoomRole
    public let myUserID: String
    public let member: RoomMember
    /// The room's name (owner only: it writes the `Room` record).
    public let roomName: String
    /// The share's public permission: the reference design shared rooms `readWrite` by URL.
    public let publicPermission: SharePermission
    private var step: Step = .notStarted
    private var outputs = OutputQueue<Action>(capacity: 1)

    /// The subscription every peer keeps on the database it reaches the room through.
    public static func subscriptionID(for scope: DatabaseScope) -> String { "zonertc-signal-\(scope.rawValue)" }

    /// `groupCalls`: this client joins the room's group calls (its `RoomMember` record says so, so
    /// group-call members never take it for a call-of-two peer waiting for an offer).
    public init(roomID: RoomID, role: RoomRole, myUserID: String, displayName: String, roomName: String = "",
                publicPermission: SharePermission = .readWrite, groupCalls: Bool = false) {
        binding = RoomBinding(roomID: roomID, role: role, myUserID: myUserID)
        self.role = role
        self.myUserID = myUserID
        member = RoomMember(userID: myUserID, displayName: displayName,
                            groupCallVersion: groupCalls ? RoomMember.currentGroupCallVersion : nil)
        self.roomName = roomName
        self.publicPermission = publicPermission
    }

    /// Feeds one input; the next step waits in `pollOutput()`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .start: outputs.append(start())
        case .outcome(let outcome): outputs.append(advance(outcome))
        }
    }

    /// The oldest output not yet taken, or nil until the next input.
    public mutating func pollOutput() -> Action? {
        outputs.pop()
    }

    /// Setting up waits only for the store; the driver bounds each request.
    public var nextDeadline: Instant? { nil }

    /// Begins: the first request.
    private mutating func start() -> Action {
        switch role {
        case .owner:
            step = .createZone
            return .store(StoreRequest(scope: .private, .createZone(binding.zone)))
        case .participant:
            step = .acceptShare
            return .store(StoreRequest(scope: .shared, .acceptShare(binding.zone)))
        }
    }

    /// The outcome of the last request: the next one, or the end.
    private mutating func advance(_ outcome: StoreOutcome) -> Action {
        if case .failed(let error) = outcome {
            // "Already there" is success for every step: that is what makes setup idempotent.
            switch (step, error.code) {
            case (.createShare, .alreadyExists): return next(after: .createShare)
            default: return .failed(error)
            }
        }
        switch (step, outcome) {
        case (.createZone, .zones(let results)):
            if let error = results.compactMap(\.error).first { return .failed(error) }
        case (.saveRecords, .modified(let result)):
            if let (_, error) = result.failures.first(where: { $0.1.code != .serverRecordChanged }) {
                return .failed(error)
            }
        case (.subscribe, .subscriptions(let results)):
            if let error = results.compactMap(\.error).first { return .failed(error) }
        case (.createShare, .share), (.acceptShare, .share):
            break
        default:
            return .failed(StoreError(.internalError, "room setup got \(outcome) at step \(step)"))
        }
        return next(after: step)
    }

    private mutating func next(after done: Step) -> Action {
        switch done {
        case .createZone:
            step = .saveRecords
            let room = Room(roomID: binding.roomID, name: roomName)
            // Created once: a record already there (a repeated setup) is `CONFLICT`, which is success
            // here; not atomic, so the member is made even when the room record exists.
            return .store(StoreRequest(scope: binding.scope, .modifyRecords(ModifyRecordsRequest(
                operations: [.create(room.record(in: binding.zone)), .create(member.record(in: binding.zone))],
                atomic: false))))
        case .acceptShare:
            step = .saveRecords
            return .store(StoreRequest(scope: binding.scope, .modifyRecords(ModifyRecordsRequest(
                operations: [.create(member.record(in: binding.zone))], atomic: false))))
        case .saveRecords:
            if role == .owner {
                step = .createShare
                return .store(StoreRequest(scope: .private, .createShare(
                    binding.zone, publicPermission: publicPermission, participants: [:])))
            }
            return subscribe()
        case .createShare:
            return subscribe()
        case .subscribe:
            step = .done
            return .ready(binding)
        case .notStarted, .done:
            return .ready(binding)
        }
    }

    private mutating func subscribe() -> Action {
        step = .subscribe
        let subscription = Subscription(subscriptionID: Self.subscriptionID(for: binding.scope), kind: .database)
        return .store(StoreRequest(scope: binding.scope, .saveSubscription(subscription)))
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension RoomSetup: SansIOMachine {}

extension StoreClient {
    /// Runs a room setup to its end against this client: where the room is, or why not.
    public func setUp(_ setup: RoomSetup, clock: any InstantSource = WallClock()) async
        -> Result<RoomBinding, StoreError> {
        var setup = setup
        setup.handle(.start, now: clock.now())
        while let action = setup.pollOutput() {
            switch action {
            case .store(let request): setup.handle(.outcome(await perform(request)), now: clock.now())
            case .ready(let binding): return .success(binding)
            case .failed(let error): return .failure(error)
            }
        }
        return .failure(StoreError(.internalError, "room setup stopped without an answer"))
    }
}
