// Our own presence record, step by step (docs/PROTOCOL.md §11.1): joining replaces whatever is
// there, refreshes go over the change tag, a deletion by someone else is a removal, conflicts and
// throttling are retried.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Own presence")
struct OwnPresenceTests {
    private let t0 = Instant.seconds(1_700_000_000)
    private let zone = ZoneID(zoneName: "room_pres0001", ownerName: "_own")

    private func presence() -> OwnPresence {
        let ms = t0.millisecondsSinceEpoch
        return OwnPresence(member: CallMember(roomID: "room_pres0001", userID: "_me", memberSession: "ab",
                                              joinedAtMs: ms, expiresAtMs: ms),
                           zone: zone, policy: .default)
    }

    private func saved(_ request: ModifyRecordsRequest, tag: String) -> StoreOutcome {
        var record = request.saves[0]
        record.recordChangeTag = tag
        return .modified(ModifyRecordsResult(results: [.saved(record)]))
    }

    private func failed(_ request: ModifyRecordsRequest, _ error: StoreError) -> StoreOutcome {
        .modified(ModifyRecordsResult(results: [.failed(request.saves[0].id, error)]))
    }

    /// Joined at `t0` (tag "t1"); the refresh due at 20 s.
    private func refreshing(_ p: inout OwnPresence) throws -> ModifyRecordsRequest {
        let join = p.join(now: t0)
        _ = p.answered(saved(join, tag: "t1"), now: t0)
        let due = p.due(now: t0 + .seconds(20))
        return try #require(due)
    }

    @Test func joinReplacesThenRefreshesOverTheTag() throws {
        var p = presence()
        let join = p.join(now: t0)
        #expect(join.kinds == [.forceReplace] && join.saves[0].recordChangeTag == nil)
        #expect(join.saves[0].fields[SignalField.expiresAt] == .timestamp(t0.millisecondsSinceEpoch + 45_000))
        let joined = p.answer(saved(join, tag: "t1"), now: t0)
        #expect(joined == .joined)
        #expect(p.nextDeadline == t0 + .seconds(20))
        let early = p.due(now: t0 + .seconds(19))
        #expect(early == nil)
        let due = p.due(now: t0 + .seconds(20))
        let refresh = try #require(due)
        #expect(refresh.kinds == [.update] && refresh.saves[0].recordChangeTag == "t1")
        #expect(refresh.saves[0].fields[SignalField.expiresAt] == .timestamp(t0.millisecondsSinceEpoch + 65_000))
        #expect(p.nextDeadline == nil)
        let refreshed = p.answer(saved(refresh, tag: "t2"), now: t0 + .seconds(20))
        #expect(refreshed == OwnPresence.Outcome.none)
        #expect(p.nextDeadline == t0 + .seconds(40))
    }

    @Test func aRecordGoneAtRefreshMeansWeWereRemoved() throws {
        var p = presence()
        let refresh = try refreshing(&p)
        let gone = p.answer(failed(refresh, StoreError(.unknownItem, "gone")), now: t0 + .seconds(20))
        #expect(gone == .removed)
        #expect(p.phase == .gone && p.nextDeadline == nil)
    }

    @Test func aDeletionSeenInTheFeedMeansWeWereRemoved() {
        var p = presence()
        let join = p.join(now: t0)
        let whileJoining = p.deletedByOthers(now: t0)
        #expect(whileJoining == OwnPresence.Outcome.none)
        _ = p.answered(saved(join, tag: "t1"), now: t0)
        let whilePresent = p.deletedByOthers(now: t0 + .seconds(1))
        #expect(whilePresent == .removed)
        let leaving = p.leave()
        #expect(leaving == RecordID(recordName: "CM__me", zoneID: zone))
    }

    /// Gone after our presence had run out (store trouble, then the record collected as expired): not
    /// a removal; the record is saved anew.
    @Test func aRecordCollectedAfterItExpiredIsSavedAnew() throws {
        var p = presence()
        let refresh = try refreshing(&p)
        let late = t0 + .seconds(46)
        let (outcome, again) = p.answered(failed(refresh, StoreError(.unknownItem, "collected")), now: late)
        #expect(outcome == .none)
        #expect(again?.kinds == [.forceReplace] && again?.saves.first?.recordChangeTag == nil)
        #expect(again?.saves.first?.fields[SignalField.memberSession] == .string("ab"))
    }

    @Test func aConflictIsSavedOverTheServersVersion() throws {
        var p = presence()
        let refresh = try refreshing(&p)
        var theirs = refresh.saves[0]
        theirs.recordChangeTag = "t9"
        let conflict = failed(refresh, StoreError(.serverRecordChanged, "changed", serverRecord: theirs))
        let (outcome, again) = p.answered(conflict, now: t0 + .seconds(20))
        #expect(outcome == .none)
        #expect(again?.saves.first?.recordChangeTag == "t9")
    }

    @Test func throttlingWaitsRetryAfterAndAFailedJoinIsReported() throws {
        var p = presence()
        _ = p.join(now: t0)
        let throttled = p.answer(.failed(StoreError(.requestRateLimited, "slow", retryAfter: 3)), now: t0)
        #expect(throttled == OwnPresence.Outcome.none)
        #expect(p.nextDeadline == t0 + .seconds(3))
        let due = p.due(now: t0 + .seconds(3))
        let again = try #require(due)
        #expect(again.kinds == [.forceReplace])
        let refused = StoreError(.permissionFailure, "no")
        let failed = p.answer(.failed(refused), now: t0 + .seconds(3))
        #expect(failed == .failed(refused))
    }
}

private extension OwnPresence {
    /// The outcome of an answer that asks for no save at once (nil when it asks for one).
    mutating func answer(_ outcome: StoreOutcome, now: Instant) -> OwnPresence.Outcome? {
        let (result, again) = answered(outcome, now: now)
        return again == nil ? result : nil
    }
}
