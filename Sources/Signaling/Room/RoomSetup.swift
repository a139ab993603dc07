// Setting a room up, spec §1 and §6, after the reference design's share flow (seed 001,
// "共有作成" / "共有受諾"): the owner creates the zone and the zone-wide share, then its `Room`
// record; a participant accepts the share (one accept function, idempotent: concern D); each
// saves its `RoomMember` record and a database subscription (those two side by side), and
// resolves its database once.
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

    /// The last steps, run side by side once the zone is reachable: the records and the subscription
    /// depend on the zone (and the share accepted) only, not on each other.
    private static let lastSteps: Set<Step> = [.saveRecords, .subscribe]

    public let binding: RoomBinding
    public let role: RoomRole
    public let myUserID: String
    public let member: RoomMember
    /// The room's name (owner only: it writes the `Room` record).
    public let roomName: String
    /// The share's public permission: the reference design shared rooms `readWrite` by URL.
    public let publicPermission: SharePermission
    private var step: Step = .notStarted
    /// The last steps still unanswered (`lastSteps`), once they were asked for.
    private var unanswered: Set<Step> = []
    private var outputs = OutputQueue<Action>(capacity: 2)

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

    /// Feeds one input; the next steps wait in `pollOutput()`. The last two requests (records and
    /// subscription) come out together: a driver may make them at once and feed their outcomes in
    /// any order.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .start: outputs.append(start())
        case .outcome(let outcome): for action in advance(outcome) { outputs.append(action) }
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

    /// The outcome of a request asked for: the next ones, or the end.
    private mutating func advance(_ outcome: StoreOutcome) -> [Action] {
        guard step != .done else { return [] }
        if case .failed(let error) = outcome {
            // "Already there" is success for every step: that is what makes setup idempotent.
            if step == .createShare && error.code == .alreadyExists { return next(after: .createShare) }
            step = .done
            return [.failed(error)]
        }
        let answered: Step
        switch (step, outcome) {
        case (.createZone, .zones(let results)):
            if let error = results.compactMap(\.error).first { return fail(error) }
            answered = .createZone
        case (.subscribe, .modified(let result)) where unanswered.contains(.saveRecords):
            if let (_, error) = result.failures.first(where: { $0.1.code != .serverRecordChanged }) {
                return fail(error)
            }
            answered = .saveRecords
        case (.subscribe, .subscriptions(let results)) where unanswered.contains(.subscribe):
            if let error = results.compactMap(\.error).first { return fail(error) }
            answered = .subscribe
        case (.createShare, .share), (.acceptShare, .share):
            answered = step
        default:
            return fail(StoreError(.internalError, "room setup got \(outcome) at step \(step)"))
        }
        return next(after: answered)
    }

    private mutating func fail(_ error: StoreError) -> [Action] {
        step = .done
        return [.failed(error)]
    }

    private mutating func next(after done: Step) -> [Action] {
        switch done {
        case .createZone:
            // The share first: participants wait for it to accept, not for our records.
            step = .createShare
            return [.store(StoreRequest(scope: .private, .createShare(
                binding.zone, publicPermission: publicPermission, participants: [:])))]
        case .createShare, .acceptShare:
            return lastRequests()
        case .saveRecords, .subscribe:
            unanswered.remove(done)
            guard unanswered.isEmpty else { return [] }
            step = .done
            return [.ready(binding)]
        case .notStarted, .done:
            step = .done
            return [.ready(binding)]
        }
    }

    /// The records (the owner's `Room` and our `RoomMember`) and the database subscription, together.
    private mutating func lastRequests() -> [Action] {
        step = .subscribe
        unanswered = Self.lastSteps
        var records = [member.record(in: binding.zone)]
        if role == .owner {
            records.insert(Room(roomID: binding.roomID, name: roomName).record(in: binding.zone), at: 0)
        }
        let subscription = Subscription(subscriptionID: Self.subscriptionID(for: binding.scope), kind: .database)
        // Created once: a record already there (a repeated setup) is `CONFLICT`, which is success
        // here; not atomic, so the member is made even when the room record exists.
        return [
            .store(StoreRequest(scope: binding.scope, .modifyRecords(ModifyRecordsRequest(
                operations: records.map { .create($0) }, atomic: false)))),
            .store(StoreRequest(scope: binding.scope, .saveSubscription(subscription))),
        ]
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
        while true {
            var requests: [StoreRequest] = []
            while let action = setup.pollOutput() {
                switch action {
                case .store(let request): requests.append(request)
                case .ready(let binding): return .success(binding)
                case .failed(let error): return .failure(error)
                }
            }
            guard !requests.isEmpty else { break }
            // The requests handed out together are made at once; their outcomes go back in order.
            let outcomes = await withTaskGroup(of: (Int, StoreOutcome).self) { group in
                for (index, request) in requests.enumerated() {
                    group.addTask { (index, await self.perform(request)) }
                }
                var outcomes = [StoreOutcome?](repeating: nil, count: requests.count)
                for await (index, outcome) in group { outcomes[index] = outcome }
                return outcomes.compactMap { $0 }
            }
            for outcome in outcomes { setup.handle(.outcome(outcome), now: clock.now()) }
        }
        return .failure(StoreError(.internalError, "room setup stopped without an answer"))
    }
}
