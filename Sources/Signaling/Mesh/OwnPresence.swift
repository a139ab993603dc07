// This peer's own `CallMember` record (docs/PROTOCOL.md §11.1), which only it writes:
// - joining saves it with `forceReplace` (all keys; the record becomes exactly ours, whatever an
//   earlier run of ours left under the name);
// - every refresh interval it is saved again with `update` and the change tag the store gave our
//   last save, so a record deleted meanwhile (the room owner removed us) is not brought back: the
//   store answers `NOT_FOUND`, and we leave — unless our presence had already run out, when anyone
//   may have collected the record: then it is saved anew;
// - leaving deletes it (`forceDelete`).
// Failed saves are retried after the store's `retryAfter` or a doubling backoff.
import RecordStore
import ZoneCore

/// The life of this peer's presence record, as a small machine inside `RoomSignaling`.
struct OwnPresence: Sendable {
    /// Where the record stands.
    enum Phase: Hashable, Sendable {
        /// Not saved yet.
        case absent
        /// The first save is out (or waits for a retry).
        case joining
        /// Saved; refreshed on time.
        case present
        /// Deleted or given up: nothing more is saved.
        case gone
    }

    /// What a save's answer means for the room.
    enum Outcome: Hashable, Sendable {
        /// Nothing the room must act on.
        case none
        /// The first save landed: we are a member.
        case joined
        /// The record is gone from the store while we were present: someone (the room owner) removed it.
        case removed
        /// The first save failed for good.
        case failed(StoreError)
    }

    let policy: PresencePolicy
    let zone: ZoneID
    /// Our member session: who we are in the call until we leave.
    private(set) var member: CallMember
    private(set) var phase: Phase = .absent
    /// The version the store holds (for its change tag).
    private(set) var saved: Record?
    /// Whether a save is out.
    private(set) var saving = false
    private var nextSave: Instant?
    private var retryAttempt = 0
    /// Saves made, first one included.
    private(set) var saves = 0
    /// Saves that failed (each retried).
    private(set) var failures = 0

    init(member: CallMember, zone: ZoneID, policy: PresencePolicy) {
        self.member = member
        self.zone = zone
        self.policy = policy
    }

    /// The record's ID.
    var recordID: RecordID { RecordID(recordName: member.recordName, zoneID: zone) }

    /// When a save is due (nil while one is out, or when none will be).
    var nextDeadline: Instant? { saving ? nil : nextSave }

    /// The first save: our record, made whole whatever was there; we join at `now`.
    mutating func join(now: Instant) -> ModifyRecordsRequest {
        phase = .joining
        member.joinedAtMs = now.millisecondsSinceEpoch
        return save(now: now)
    }

    /// A refresh or a retry, if one is due at `now`.
    mutating func due(now: Instant) -> ModifyRecordsRequest? {
        guard !saving, phase == .joining || phase == .present, let at = nextSave, at <= now else { return nil }
        return save(now: now)
    }

    /// Stops saving; returns the record to delete if one may exist.
    mutating func leave() -> RecordID? {
        let existed = phase != .absent
        phase = .gone
        nextSave = nil
        return existed ? recordID : nil
    }

    /// Someone else deleted our record (the change feed said so): a removal, or, when our presence
    /// had run out, a collection (the record is saved anew at once).
    mutating func deletedByOthers(now: Instant) -> Outcome {
        guard phase == .present, !saving else { return .none }
        if hadExpired(by: now) {
            saved = nil
            nextSave = now
            return .none
        }
        phase = .gone
        nextSave = nil
        return .removed
    }

    /// Whether the version the store last held had expired by `now`.
    private func hadExpired(by now: Instant) -> Bool {
        guard let expiry = saved?.fields[SignalField.expiresAt]?.timestampValue else { return false }
        return expiry <= now.millisecondsSinceEpoch
    }

    private mutating func save(now: Instant) -> ModifyRecordsRequest {
        member.expiresAtMs = now.millisecondsSinceEpoch.addingSaturated(policy.ttl.wholeMilliseconds)
        saving = true
        saves += 1
        nextSave = nil
        if saved == nil {
            return ModifyRecordsRequest(operations: [.forceReplace(member.record(over: nil, in: zone))], atomic: false)
        }
        // Conditional on the version we saved: a record deleted meanwhile is NOT_FOUND, not brought back.
        return ModifyRecordsRequest(operations: [.update(member.record(over: saved, in: zone))], atomic: false)
    }

    /// The answer to our save; a request to send at once when the answer calls for one (a conflict
    /// with a version we can save over).
    mutating func answered(_ outcome: StoreOutcome, now: Instant) -> (Outcome, ModifyRecordsRequest?) {
        guard saving else { return (.none, nil) }
        saving = false
        guard phase == .joining || phase == .present else { return (.none, nil) }
        let error: StoreError
        switch outcome {
        case .modified(let result):
            if let record = result.savedRecords.first(where: { $0.id.recordName == member.recordName }) {
                saved = record
                retryAttempt = 0
                nextSave = now + policy.refreshInterval
                let joined = phase == .joining
                phase = .present
                return (joined ? .joined : .none, nil)
            }
            error = result.failures.first?.1 ?? StoreError(.internalError, "the store did not answer our presence save")
        case .failed(let whole):
            error = whole
        case .lookedUp, .zoneChanges, .databaseChanges, .zones, .share, .subscriptions:
            error = StoreError(.internalError, "a presence save was answered with \(outcome)")
        }
        failures += 1
        switch error.code {
        case .unknownItem where phase == .present:
            // Gone while we were present: someone removed us. Gone after our presence had run out:
            // collected like any expired member's (docs/PROTOCOL.md §11.5), so we save it anew.
            guard hadExpired(by: now) else {
                phase = .gone
                return (.removed, nil)
            }
            saved = nil
            return (.none, save(now: now))
        case .serverRecordChanged:
            // Someone wrote under our name (readers refuse that version: its writer is not us), or an
            // earlier save of ours landed unanswered: ours goes over the server's version.
            guard let server = error.serverRecord, retryAttempt < 3 else { break }
            retryAttempt += 1
            saved = server
            return (.none, save(now: now))
        default:
            break
        }
        if phase == .joining && !error.code.isRetryable { return (.failed(error), nil) }
        nextSave = now + retryWait(error)
        return (.none, nil)
    }

    /// The store's `retryAfter` (bounded), else `retryBase` doubled per attempt up to `retryCap`.
    private mutating func retryWait(_ error: StoreError) -> Duration {
        let cap = policy.retryCap.nanoseconds
        if let seconds = error.retryAfter, seconds.isFinite, seconds >= 0 {
            return .nanoseconds(min(Int64(min(seconds, Double(cap) / 1e9) * 1e9), cap))
        }
        let scaled = policy.retryBase.nanoseconds.multipliedReportingOverflow(by: Int64(1) << min(retryAttempt, 30))
        retryAttempt += 1
        return .nanoseconds(scaled.overflow ? cap : min(scaled.partialValue, cap))
    }
}
