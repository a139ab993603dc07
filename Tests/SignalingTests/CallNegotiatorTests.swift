// The negotiator by hand, without a store: events in, actions out (spec §3–4).
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

@Suite("Call negotiator")
struct CallNegotiatorTests {
    private let room = try! RoomID("room_neg00001")
    private let t0 = Instant.seconds(1_700_000_000)
    private var zone: ZoneID { room.zoneID(owner: "_a11ce") }

    /// A's negotiator (the offer creator), started, its first offer out: returns it and the
    /// publication request.
    private func offering(configuration: CallNegotiator.Configuration = .init(), at now: Instant? = nil,
                          clock: EpochClock = EpochClock())
        -> (CallNegotiator, saves: [Record], atomic: Bool, kinds: [RecordOperation.Kind]) {
        var n = try! CallNegotiator(roomID: room, myUserID: "_a11ce", remoteUserID: "_b0b", zone: zone,
                                    epochClock: clock, configuration: configuration, seed: 1)
        let now = now ?? t0
        #expect(n.outputs(after: .startCall, now: now)
                == [.lookup([RecordID(recordName: n.names.session, zoneID: zone)]), .report(.preparing)])
        let actions = n.outputs(after: .lookedUp([.failed(RecordID(recordName: n.names.session, zoneID: zone),
                                                  StoreError(.unknownItem, "none"))]), now: now)
        let modify = actions.compactMap { a -> ([RecordOperation], Bool)? in
            guard case .modify(let operations, let atomic) = a else { return nil }
            return (operations, atomic)
        }
        let operations = modify.flatMap(\.0)
        return (n, operations.compactMap(\.record), modify.first?.1 ?? false, operations.map(\.kind))
    }

    private func session(_ n: CallNegotiator, epoch: CallEpoch, tag: String) -> Record {
        var record = SignalSession(sessionKey: n.sessionKey.rawValue, roomID: room.rawValue, userID: "_b0b",
                                   otherUserID: "_a11ce", callEpoch: epoch, updatedAtMs: 0)
            .record(over: nil, name: n.names.session, in: zone)
        record.recordChangeTag = tag
        return record
    }

    /// The outcome of the atomic publication when the session record changed on the server.
    private func conflict(_ n: CallNegotiator, _ saves: [Record], server: Record) -> ModifyRecordsResult {
        ModifyRecordsResult(results: saves.map { record in
            record.recordType == SignalRecordType.session
                ? .failed(record.id, StoreError(.serverRecordChanged, "changed", serverRecord: server))
                : .failed(record.id, StoreError(.batchRequestFailed, "atomic"))
        })
    }

    @Test func anEpochIsPublishedAtomicallyWithTheSessionRecord() {
        let (n, saves, atomic, kinds) = offering()
        #expect(saves.map(\.recordType) == [SignalRecordType.envelope, SignalRecordType.session])
        // No session record yet: both are created, atomically.
        #expect(atomic && kinds == [.create, .create])
        #expect(n.state == .offering(CallEpoch(milliseconds: t0.millisecondsSinceEpoch)))
        #expect(saves[1].fields[SignalField.callEpoch] == .int64(t0.millisecondsSinceEpoch))
    }

    /// `serverRecordChanged` on `SignalSession`, resolved by the maximum epoch (spec §3).
    @Test func aLowerEpochOnTheServerIsOverwrittenOverItsTag() {
        var (n, saves, _, _) = offering()
        let mine = n.activeEpoch!
        let server = session(n, epoch: CallEpoch(milliseconds: mine.milliseconds - 5), tag: "t9")
        let actions = n.outputs(after: .modified(conflict(n, saves, server: server)), now: t0)
        #expect(n.counters.sessionConflicts == 1)
        guard case .modify(let operations, true)? = actions.first else {
            Issue.record("no retry: \(actions)")
            return
        }
        // The session over the server's tag is replaced, conditionally; the offer is still new.
        #expect(operations.map(\.kind) == [.create, .replace])
        let retry = operations.compactMap(\.record)
        let retried = retry.first { $0.recordType == SignalRecordType.session }!
        #expect(retried.recordChangeTag == "t9" && retried.fields[SignalField.callEpoch] == .int64(mine.milliseconds))
        #expect(retry.contains { $0.recordType == SignalRecordType.envelope })
    }

    @Test func aHigherEpochOnTheServerWinsAndOurOfferIsAbandoned() {
        var (n, saves, _, _) = offering()
        let mine = n.activeEpoch!
        let higher = CallEpoch(milliseconds: mine.milliseconds + 5)
        let actions = n.outputs(after: .modified(conflict(n, saves, server: session(n, epoch: higher, tag: "t9"))),
                                now: t0)
        #expect(actions == [.fetchNow, .report(.waitingForOffer)])
        #expect(n.counters.epochsAbandoned == 1 && n.inbox.floor == higher && n.epochClock.last == higher)
        // Candidates gathered for the lost epoch are not sent.
        #expect(n.outputs(after: .ice(.localCandidates(epoch: mine, [SignalFixtures.candidate(octet: 1, ufrag: "x")])),
                         now: t0) == [])
        #expect(n.counters.localCandidatesDropped == 1)
    }

    @Test func theSameEpochOnTheServerNeedsNoWrite() {
        var (n, saves, _, _) = offering()
        let server = session(n, epoch: n.activeEpoch!, tag: "t9")
        let actions = n.outputs(after: .modified(conflict(n, saves, server: server)), now: t0)
        #expect(actions == [] && !n.negotiation.makingOffer)
    }

    @Test func sessionRetriesAreBounded() {
        var (n, saves, _, _) = offering()
        let mine = n.activeEpoch!
        var rounds = 0
        while rounds < 10 {
            let server = session(n, epoch: CallEpoch(milliseconds: mine.milliseconds - 1), tag: "t\(rounds)")
            let actions = n.outputs(after: .modified(conflict(n, saves, server: server)), now: t0)
            guard case .modify(let again, _)? = actions.first else { break }
            saves = again.compactMap(\.record)
            rounds += 1
        }
        #expect(rounds == 4 && n.counters.saveFailures == 1 && n.counters.sessionConflicts == 5)
    }

    @Test func aThrottledPublicationIsRetriedAfterRetryAfter() {
        var (n, saves, _, _) = offering()
        let request = CallNegotiator.Action.modify(saves.map { RecordOperation.create($0) }, atomic: true)
        let limited = StoreError(.requestRateLimited, "slow", retryAfter: 3)
        #expect(n.outputs(after: .requestFailed(request, limited), now: t0) == [])
        #expect(n.nextDeadline == t0 + .seconds(3))
        #expect(n.outputs(after: .timer, now: t0 + .seconds(2)) == [])
        #expect(n.outputs(after: .timer, now: t0 + .seconds(3)) == [request])
        #expect(n.counters.saveRetries == 1)
    }

    @Test func withoutConflictResolutionSavesAreLastWriterWins() {
        var configuration = CallNegotiator.Configuration()
        configuration.protections = .none
        let (_, saves, atomic, kinds) = offering(configuration: configuration)
        #expect(saves.count == 2 && !atomic && kinds == [.forceReplace, .forceReplace])
    }

    @Test func epochsIncreaseWhenTheClockStepsBack() {
        var (n, _, _, _) = offering()
        let first = n.activeEpoch!
        _ = n.outputs(after: .restart, now: t0 - .seconds(3600))
        #expect(n.activeEpoch! > first && n.counters.epochsStarted == 2)
        // A device that forgot its clock still starts above the session record's epoch.
        var fresh = try! CallNegotiator(roomID: room, myUserID: "_a11ce", remoteUserID: "_b0b", zone: zone, seed: 2)
        _ = fresh.outputs(after: .startCall, now: t0 - .seconds(7200))
        _ = fresh.outputs(after: .lookedUp([.found(session(fresh, epoch: first, tag: "t1"))]), now: t0 - .seconds(7200))
        #expect(fresh.activeEpoch! > first)
    }

    @Test func recordsBeforeTheCallStartsWaitForIt() {
        var b = try! CallNegotiator(roomID: room, myUserID: "_b0b", remoteUserID: "_a11ce", zone: zone, seed: 3)
        let (a, saves, _, _) = offering()
        var offer = saves[0]
        offer.recordChangeTag = "1"
        #expect(b.outputs(after: .recordsFetched([offer], deleted: []), now: t0) == [])
        _ = b.outputs(after: .startCall, now: t0)
        let actions = b.outputs(after: .lookedUp([]), now: t0)
        #expect(actions.contains(.ice(.restartICE(epoch: a.activeEpoch!, credentials: b.credentialsForTest))))
        #expect(b.state == .connecting(a.activeEpoch!))
    }

    /// PROTOCOL.md §5: a room whose session names an epoch that already has its answer holds a finished
    /// negotiation. The peer waiting for the offer looks the answer up, and the old offer is stale for it.
    @Test func anAnsweredEpochIsFinishedNotJoined() {
        let (a, saves, _, _) = offering()
        let old = a.activeEpoch!
        var offer = saves[0]
        offer.recordChangeTag = "1"
        let later = t0 + .seconds(60)
        var b = try! CallNegotiator(roomID: room, myUserID: "_b0b", remoteUserID: "_a11ce", zone: zone, seed: 3)
        _ = b.outputs(after: .startCall, now: later)
        let answerID = RecordID(recordName: b.names.envelope(epoch: old, type: .answer), zoneID: zone)
        #expect(b.outputs(after: .lookedUp([.found(session(b, epoch: old, tag: "t1"))]), now: later)
                    .contains(.lookup([answerID])))
        #expect(b.state == .preparing)
        _ = b.outputs(after: .lookedUp([.found(Record(recordType: SignalRecordType.envelope, id: answerID))]), now: later)
        #expect(b.state == .waitingForOffer)
        #expect(b.inbox.floor == CallEpoch(milliseconds: old.milliseconds + 1))
        let actions = b.outputs(after: .recordsFetched([offer], deleted: []), now: later)
        #expect(!actions.contains { if case .ice = $0 { true } else { false } }, "the old offer is not answered")
        #expect(b.inbox.counters.staleDrops == 1 && b.counters.resets == 0)
    }

    /// The same room without the answer: the offer of the session's epoch is the one to answer.
    @Test func anUnansweredEpochIsJoined() {
        let (a, saves, _, _) = offering()
        var offer = saves[0]
        offer.recordChangeTag = "1"
        var b = try! CallNegotiator(roomID: room, myUserID: "_b0b", remoteUserID: "_a11ce", zone: zone, seed: 3)
        _ = b.outputs(after: .startCall, now: t0)
        _ = b.outputs(after: .lookedUp([.found(session(b, epoch: a.activeEpoch!, tag: "t1"))]), now: t0)
        let answerID = RecordID(recordName: b.names.envelope(epoch: a.activeEpoch!, type: .answer), zoneID: zone)
        _ = b.outputs(after: .lookedUp([.failed(answerID, StoreError(.unknownItem, "none"))]), now: t0)
        #expect(b.inbox.floor == a.activeEpoch)
        let actions = b.outputs(after: .recordsFetched([offer], deleted: []), now: t0)
        #expect(actions.contains(.ice(.restartICE(epoch: a.activeEpoch!, credentials: b.credentialsForTest))))
        #expect(b.state == .connecting(a.activeEpoch!))
    }

    /// PROTOCOL.md §7: the remote's description of the active epoch leaving the zone is its goodbye,
    /// reported once the description was applied; any other deletion is not.
    @Test func onlyTheActiveRemoteDescriptionLeavingIsAGoodbye() {
        let (a, saves, _, _) = offering()
        let epoch = a.activeEpoch!
        var offer = saves[0]
        offer.recordChangeTag = "1"
        var b = try! CallNegotiator(roomID: room, myUserID: "_b0b", remoteUserID: "_a11ce", zone: zone, seed: 3)
        _ = b.outputs(after: .startCall, now: t0)
        _ = b.outputs(after: .lookedUp([.found(session(b, epoch: epoch, tag: "t1"))]), now: t0)
        let answerID = RecordID(recordName: b.names.envelope(epoch: epoch, type: .answer), zoneID: zone)
        _ = b.outputs(after: .lookedUp([.failed(answerID, StoreError(.unknownItem, "none"))]), now: t0)
        let offerID = RecordID(recordName: b.names.envelope(epoch: epoch, type: .offer), zoneID: zone)
        func goodbyes(_ actions: [CallNegotiator.Action]) -> [CallNegotiator.Action] {
            actions.filter { if case .remoteHungUp = $0 { true } else { false } }
        }
        // Before the offer is applied its deletion says nothing (B never took part in that epoch).
        var early = b
        #expect(goodbyes(early.outputs(after: .recordsFetched([], deleted: [offerID]), now: t0)).isEmpty)
        _ = b.outputs(after: .recordsFetched([offer], deleted: []), now: t0)
        #expect(b.state == .connecting(epoch))
        let older = CallEpoch(milliseconds: epoch.milliseconds - 1_000)
        let notGoodbyes = [
            RecordID(recordName: b.names.envelope(epoch: older, type: .offer), zoneID: zone),  // an older epoch
            answerID,  // our own answer
            RecordID(recordName: b.names.iceChunk(epoch: epoch, owner: "_a11ce", uuid: "c1"), zoneID: zone),
            RecordID(recordName: offerID.recordName, zoneID: room.zoneID(owner: "_b0b")),  // another zone
        ]
        #expect(goodbyes(b.outputs(after: .recordsFetched([], deleted: notGoodbyes), now: t0)).isEmpty)
        #expect(goodbyes(b.outputs(after: .recordsFetched([], deleted: [offerID]), now: t0))
                == [.remoteHungUp(epoch: epoch, .offer)])
        // Once hung up, nothing more is reported.
        _ = b.outputs(after: .hangUp, now: t0)
        #expect(goodbyes(b.outputs(after: .recordsFetched([], deleted: [offerID]), now: t0)).isEmpty)
    }

    @Test("our descriptions say the configured direction: a peer that only sends offers sendonly")
    func theOfferSaysTheDirection() {
        for (direction, line) in [(MediaDirection.sendOnly, "a=sendonly\r\n"), (.receiveOnly, "a=recvonly\r\n"),
                                  (.sendReceive, "a=sendrecv\r\n")] {
            var configuration = CallNegotiator.Configuration()
            configuration.direction = direction
            let payloads = offering(configuration: configuration).saves.compactMap { record -> String? in
                if case .string(let text)? = record.fields["payload"] { return text }
                return nil
            }
            #expect(payloads.count == 1 && payloads.allSatisfy { $0.contains(line) }, "\(direction): \(payloads)")
        }
    }
}

extension CallNegotiator {
    /// The credentials the negotiator chose for its active epoch (tests only).
    fileprivate var credentialsForTest: ICECredentials { localCredentials! }
}
