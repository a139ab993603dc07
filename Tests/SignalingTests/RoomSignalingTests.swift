// The room machine by hand, without a store: events in, actions out, one step per line
// (docs/PROTOCOL.md §11). Joining waits for both our presence and the first fetch; a member appearing
// starts a leg with the roles the join order gives; leaving deletes our records and ends with `left`.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Room signaling")
struct RoomSignalingTests {
    private let t0 = Instant.seconds(1_700_000_000)
    private let room = try! RoomID("room_hand0001")
    private var binding: RoomBinding {
        RoomBinding(roomID: room, role: .participant(ownerUserID: "_own"), myUserID: "_me")
    }

    private func machine() throws -> RoomSignaling {
        try RoomSignaling(configuration: RoomSignalingConfiguration(signaling: .standard()), binding: binding,
                          myUserID: "_me", seed: 5, now: t0)
    }

    /// Our presence record's save: `forceReplace` when joining, `update` over our last version after.
    private func presenceSave(_ m: CallMember, over base: Record? = nil) -> RoomSignaling.Action {
        let record = m.record(over: base, in: binding.zone)
        return .store(StoreRequest(scope: .shared, .modifyRecords(ModifyRecordsRequest(
            operations: [base == nil ? .forceReplace(record) : .update(record)], atomic: false))), origin: .presence)
    }

    private func stored(_ record: Record, by user: String, at ms: Int64, tag: String) -> Record {
        var record = record
        record.created = RecordStamp(timestamp: ms, userRecordName: user)
        record.modified = RecordStamp(timestamp: ms, userRecordName: user)
        record.recordChangeTag = tag
        return record
    }

    private func emptyPage() -> StoreOutcome {
        .zoneChanges(ZoneChanges(changed: [], deleted: [], syncToken: ChangeToken(rawValue: "z1"), moreComing: false))
    }

    /// Bob's presence, joined at `at`, and his record as the store returns it.
    private func bobsPresence(joinedAt at: Instant) -> (CallMember, Record) {
        let bob = CallMember(roomID: room.rawValue, userID: "_bob", memberSession: String(repeating: "b", count: 32),
                             joinedAtMs: at.millisecondsSinceEpoch, expiresAtMs: at.millisecondsSinceEpoch + 45_000)
        return (bob, stored(bob.record(over: nil, in: binding.zone), by: "_bob", at: at.millisecondsSinceEpoch,
                            tag: "b1"))
    }

    /// A machine joined at `t0` with nobody else in the room, and our presence record as saved.
    private func joined() throws -> (RoomSignaling, Record) {
        var room = try machine()
        _ = room.outputs(after: .join, now: t0)
        let mine = stored(room.me.record(over: nil, in: binding.zone), by: "_me", at: t0.millisecondsSinceEpoch,
                          tag: "p1")
        _ = room.outputs(after: .reply(.presence, .modified(ModifyRecordsResult(results: [.saved(mine)]))), now: t0)
        _ = room.outputs(after: .reply(.path(0), emptyPage()), now: t0)
        return (room, mine)
    }

    @Test func joiningWaitsForPresenceAndTheFirstFetch() throws {
        var room = try machine()
        var me = room.me
        me.joinedAtMs = t0.millisecondsSinceEpoch
        me.expiresAtMs = t0.millisecondsSinceEpoch + 45_000
        let fetch = RoomSignaling.Action.store(StoreRequest(scope: .shared, .fetchZoneChanges(
            binding.zone, since: nil, resultsLimit: SyncTiming.default.resultsLimit)), origin: .path(0))
        #expect(room.outputs(after: .join, now: t0) == [presenceSave(me), fetch])
        #expect(room.state == .joining)
        let saved = stored(me.record(over: nil, in: binding.zone), by: "_me", at: t0.millisecondsSinceEpoch, tag: "p1")
        #expect(room.outputs(after: .reply(.presence, .modified(ModifyRecordsResult(results: [.saved(saved)]))),
                             now: t0).isEmpty)
        let afterFetch = room.outputs(after: .reply(.path(0), emptyPage()), now: t0)
        #expect(Array(afterFetch.prefix(2)) == [.joined, .roster([me])])
        // Then the settling fetch (docs/PROTOCOL.md §11.1): a member that joined at the same moment is
        // found now, not on its push seconds later.
        #expect(afterFetch.count == 3)
        if case .store(let request, .path(0))? = afterFetch.last, case .fetchZoneChanges = request.operation {
        } else {
            Issue.record("no settling fetch after joining: \(afterFetch)")
        }
        #expect(room.state == .joined)
        #expect(room.nextDeadline == t0 + .seconds(20))
        var refreshed = me
        refreshed.expiresAtMs += 20_000
        #expect(room.outputs(after: .timer, now: t0 + .seconds(20))
                == [presenceSave(refreshed, over: saved)])
    }

    @Test func aLaterMemberGetsALegThatWaitsForItsOffer() throws {
        var (room, _) = try joined()
        let later = t0 + .seconds(1)
        let (bob, bobs) = bobsPresence(joinedAt: later)
        let actions = room.outputs(after: .fetched([bobs], deleted: []), now: later)
        let key = try SessionKey(roomID: self.room, users: "_me", "_bob")
        let leg = LegID(remote: "_bob", generation: 1)
        #expect(actions == [
            .roster([room.me, bob]),
            .legStarted(LegStart(leg: leg, sessionKey: key, makesFirstOffer: false, isPolite: true,
                                 memberSession: bob.memberSession, configuration: CallNegotiator.Configuration())),
            // No session record in the zone we read (§11.3: the feed answers the leg's first lookup, no
            // round trip): the leg waits for Bob's offer at once.
            .report(remote: "_bob", .preparing),
            .report(remote: "_bob", .waitingForOffer),
        ])
        #expect(room.counters.lookupsFromFeed == 1)
        // (The fetch is in flight: the fallback is the next deadline.)
        #expect(room.nextDeadline == later + .seconds(8))
        // It never comes: 8 s after the leg began waiting we offer ourselves (the fallback), alone in an
        // atomic request with the session record.
        #expect(room.outputs(after: .timer, now: later + .seconds(7)).isEmpty)
        let fallback = room.outputs(after: .timer, now: later + .seconds(8))
        #expect(room.counters.fallbackOffers == 1)
        let publications = fallback.filter {
            guard case .store(let request, _) = $0, case .modifyRecords(let m) = request.operation else { return false }
            return m.atomic
        }
        #expect(publications.count == 1)
    }

    /// Joining counts as negotiating (§11.1): the member that will wait for an offer makes its first fast
    /// poll 2 s after its join, as a call of two's answerer does after its start, not 2 s after its leg began.
    @Test func aMemberWaitingForItsFirstOfferPollsTwoSecondsAfterItsJoin() throws {
        var room = try machine()
        _ = room.outputs(after: .join, now: t0)
        let mine = stored(room.me.record(over: nil, in: binding.zone), by: "_me", at: t0.millisecondsSinceEpoch,
                          tag: "p1")
        _ = room.outputs(after: .reply(.presence, .modified(ModifyRecordsResult(results: [.saved(mine)]))),
                         now: t0 + .milliseconds(300))
        // Joined at 0.5 s; the settling fetch brings Bob, who joined after us: his leg waits for his offer.
        _ = room.outputs(after: .reply(.path(0), emptyPage()), now: t0 + .milliseconds(500))
        let later = t0 + .milliseconds(600)
        let (_, bobs) = bobsPresence(joinedAt: later)
        let page = StoreOutcome.zoneChanges(ZoneChanges(changed: [bobs], deleted: [],
                                                        syncToken: ChangeToken(rawValue: "z2"), moreComing: false))
        _ = room.outputs(after: .reply(.path(0), page), now: t0 + .milliseconds(700))
        #expect(room.negotiator(of: "_bob")?.state == .waitingForOffer)
        // The fetch the new leg asked for comes back empty: the next poll is the one the join scheduled.
        _ = room.outputs(after: .reply(.path(0), emptyPage()), now: t0 + .milliseconds(900))
        #expect(room.nextDeadline == t0 + .seconds(2))
        let poll = room.outputs(after: .timer, now: t0 + .seconds(2))
        #expect(poll.contains { if case .store(_, .path(0)) = $0 { true } else { false } })
    }

    /// Legs that gathered together (a join offering to every earlier member) trickle together: one
    /// non-atomic `records/modify` carries every leg's chunk — candidates and end-of-candidates in one
    /// chunk each (§11.3) — while each offer + session record went alone, atomic.
    @Test func legsGatheringTogetherSaveTheirChunksInOneRequest() throws {
        var (room, _) = try joined()
        let earlier = t0 - .seconds(1)
        var members: [Record] = []
        for user in ["_bob", "_cat"] {
            let member = CallMember(roomID: self.room.rawValue, userID: user,
                                    memberSession: String(repeating: "c", count: 32),
                                    joinedAtMs: earlier.millisecondsSinceEpoch,
                                    expiresAtMs: earlier.millisecondsSinceEpoch + 45_000)
            members.append(stored(member.record(over: nil, in: binding.zone), by: user,
                                  at: earlier.millisecondsSinceEpoch, tag: "\(user)1"))
        }
        let now = t0 + .seconds(1)
        let offers = room.outputs(after: .fetched(members, deleted: []), now: now).filter {
            guard case .store(_, .legs) = $0 else { return false }
            return true
        }
        #expect(offers.count == 2, "one atomic offer + session request per leg")
        let reports: [(remote: String, event: ICEEvent)] = try ["_bob", "_cat"].enumerated().map { index, user in
            let epoch = try #require(room.negotiator(of: user)?.activeEpoch)
            let candidate = SignalFixtures.candidate(octet: UInt8(index + 1), ufrag: "x")
            return (user, .localCandidates(epoch: epoch, [candidate], endOfCandidates: true))
        }
        let batchedBefore = room.counters.batchedLegRequests
        let trickled = room.outputs(after: .iceReports(reports), now: now)
        #expect(trickled.count == 1)
        guard case .store(let request, .legs(let carried))? = trickled.first,
              case .modifyRecords(let modify) = request.operation else {
            Issue.record("no chunk request: \(trickled)")
            return
        }
        #expect(!modify.atomic && carried.map(\.leg.remote) == ["_bob", "_cat"])
        let chunks = try modify.operations.map { try SignalIceChunk(decoding: try #require($0.record)) }
        #expect(chunks.count == 2 && chunks.allSatisfy { $0.endOfCandidates && $0.candidates.count == 1 })
        #expect(room.counters.batchedLegRequests == batchedBefore + 1)
    }

    @Test func leavingDeletesOurPresenceAndEndsWithLeft() throws {
        var (room, mine) = try joined()
        let delete = StoreRequest(scope: .shared, .modifyRecords(ModifyRecordsRequest(
            operations: [.forceDelete(mine.id)], atomic: false)))
        #expect(room.outputs(after: .leave, now: t0 + .seconds(1)) == [.store(delete, origin: .cleanup)])
        #expect(room.state == .leaving(.requested))
        #expect(room.outputs(after: .reply(.cleanup, .modified(ModifyRecordsResult(results: [.deleted(mine.id)]))),
                             now: t0 + .seconds(1)) == [.left(.requested)])
        #expect(room.nextDeadline == nil)
        #expect(room.outputs(after: .leave, now: t0 + .seconds(2)).isEmpty)
    }

    @Test func theJoinOrderDecidesWhoOffersFirst() {
        let early = JoinOrder(joinedAtMs: 10, userID: "_z")
        let late = JoinOrder(joinedAtMs: 20, userID: "_a")
        #expect(late.offersFirst(to: early) && !early.offersFirst(to: late))
        let tieLow = JoinOrder(joinedAtMs: 10, userID: "_a")
        #expect(early.offersFirst(to: tieLow) && !tieLow.offersFirst(to: early))
        #expect(!early.offersFirst(to: early))
    }

    @Test func aSessionKeysOtherUserIsReadEvenWithHashesInUserIDs() {
        #expect(PairCollector.other(in: "room_hand0001#_a#_b", roomID: room, than: "_a") == "_b")
        #expect(PairCollector.other(in: "room_hand0001#_a#_b", roomID: room, than: "_b") == "_a")
        #expect(PairCollector.other(in: "room_hand0001#_a#_b#c", roomID: room, than: "_a") == "_b#c")
        #expect(PairCollector.other(in: "room_hand0001#_a#_b#c", roomID: room, than: "_b#c") == "_a")
        #expect(PairCollector.other(in: "room_hand0001#_a#_b", roomID: room, than: "_c") == nil)
        #expect(PairCollector.other(in: "room_else0001#_a#_b", roomID: room, than: "_a") == nil)
        #expect(PairCollector.other(in: "room_hand0001#_b#_a", roomID: room, than: "_a") == nil)
    }
}
