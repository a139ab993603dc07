// Records the other user wrote to hurt us (issue #13, item 1): every one is dropped, counted as
// malformed and reported with its record name and reason — never a trap, never a silent wait.
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

@Suite("Hostile signal records")
struct HostileRecordTests {
    private let room = try! RoomID("room_host0001")
    private let t0 = Instant.seconds(1_700_000_000)
    private var zone: ZoneID { room.zoneID(owner: "_a11ce") }
    private var key: String { "room_host0001#_a11ce#_b0b" }
    private var epoch: Int64 { t0.millisecondsSinceEpoch }

    /// B's inbox, with the default lead of one day.
    private func inbox() -> SignalInbox {
        SignalInbox(myUserID: "_b0b", remoteUserID: "_a11ce", sessionKey: key, maxEpochLead: .seconds(86_400))
    }

    private func offer(name: String = "SE_hostile", epoch: FieldValue, payload: String? = nil) throws -> Record {
        let text = try payload ?? SessionDescription(parsing: Fixtures.chromeOffer, type: .offer).description
        return Record(recordType: SignalRecordType.envelope, id: RecordID(recordName: name, zoneID: zone),
                      fields: [SignalField.sessionKey: .string(key), SignalField.roomID: .string(room.rawValue),
                               SignalField.callEpoch: epoch, SignalField.ownerUserId: .string("_a11ce"),
                               SignalField.envelopeType: .string("offer"), SignalField.payload: .string(text),
                               SignalField.updatedAt: .timestamp(0)], recordChangeTag: "1")
    }

    private func session(epoch: Int64, tag: String = "t1") -> Record {
        var record = SignalSession(sessionKey: key, roomID: room.rawValue, userID: "_b0b", otherUserID: "_a11ce",
                                   callEpoch: CallEpoch(milliseconds: epoch), updatedAtMs: 0)
            .record(over: nil, name: "SS_" + key, in: zone)
        record.recordChangeTag = tag
        return record
    }

    private func chunk(seq: FieldValue, epoch: Int64, name: String) -> Record {
        Record(recordType: SignalRecordType.iceChunk, id: RecordID(recordName: name, zoneID: zone), fields: [
            SignalField.sessionKey: .string(key), SignalField.roomID: .string(room.rawValue),
            SignalField.callEpoch: .int64(epoch), SignalField.ownerUserId: .string("_a11ce"),
            SignalField.candidateType: .string("batch-v1"),
            SignalField.candidate: .string(CandidateBatch(candidates: [], endOfCandidates: false).json),
            SignalField.chunkCreatedAt: .timestamp(0), SignalField.seq: seq, SignalField.ufrag: .string("uf"),
        ], recordChangeTag: "1")
    }

    /// The one problem `records` cause: dropped, counted once as malformed, named.
    private func refused(_ records: [Record]) -> SignalRecordError? {
        var inbox = inbox()
        let output = inbox.ingest(records, now: t0)
        #expect(output.deliveries.isEmpty)
        #expect(inbox.counters.malformed == 1)
        guard output.problems.count == 1, case .record(let error) = output.problems[0] else {
            Issue.record("expected one record problem, got \(output.problems)")
            return nil
        }
        #expect(output.problems[0].description.contains(error.recordName ?? "?"))
        return error
    }

    @Test func theEpochClockSaturatesInsteadOfTrapping() {
        var clock = EpochClock()
        clock.observe(CallEpoch(milliseconds: .max))
        #expect(clock.next(now: t0) == CallEpoch(milliseconds: .max))
        #expect(clock.next(now: t0) == CallEpoch(milliseconds: .max))
    }

    @Test func anOfferWithTheLargestEpochIsRefused() throws {
        let error = refused([try offer(epoch: .int64(.max))])
        #expect(error?.kind == .epochTooFarAhead && error?.field == SignalField.callEpoch)
        #expect(error?.recordName == "SE_hostile")
    }

    @Test func anEpochJustInsideTheLeadIsAccepted() throws {
        var inbox = inbox()
        let output = inbox.ingest([try offer(epoch: .int64(epoch + 86_400_000))], now: t0)
        #expect(output.problems.isEmpty && output.deliveries.count == 1 && inbox.counters.malformed == 0)
        let error = refused([try offer(epoch: .int64(epoch + 86_400_001))])
        #expect(error?.kind == .epochTooFarAhead)
    }

    @Test func aNegativeEpochIsRefused() throws {
        let error = refused([try offer(epoch: .int64(-1))])
        #expect(error?.kind == .invalidFieldValue && error?.field == SignalField.callEpoch)
    }

    @Test func anEpochOfTheWrongTypeIsRefused() throws {
        for value: FieldValue in [.string("1700000000000"), .double(1e300), .list([.int64(1)])] {
            let error = refused([try offer(epoch: value)])
            #expect(error?.kind == .wrongFieldType && error?.field == SignalField.callEpoch, "\(value)")
        }
    }

    @Test func garbageSDPIsRefused() throws {
        let error = refused([try offer(epoch: .int64(epoch), payload: "\u{1}\u{2}garbage\r\nv=0")])
        #expect(error?.kind == .invalidSessionDescription && error?.field == SignalField.payload)
    }

    @Test func aNegativeSeqIsRefused() {
        let error = refused([chunk(seq: .int64(-1), epoch: epoch, name: "IC_minus")])
        #expect(error?.kind == .invalidFieldValue && error?.field == SignalField.seq && error?.recordName == "IC_minus")
    }

    @Test func aSeqOfTheWrongTypeIsRefused() {
        let error = refused([chunk(seq: .string("0"), epoch: epoch, name: "IC_text")])
        #expect(error?.kind == .wrongFieldType && error?.field == SignalField.seq)
    }

    @Test func tenThousandChunksAreHeldOnlyUpToTheBound() {
        var inbox = inbox()
        // seq 0 never comes: every chunk would wait for it.
        let flood = (1...10_000).map { chunk(seq: .int64(Int64($0)), epoch: epoch, name: "IC_flood_\($0)") }
        let output = inbox.ingest(flood, now: t0)
        #expect(output.deliveries.isEmpty)
        #expect(inbox.counters.malformed == 10_000 - SignalInbox.maxHeldChunks)
        #expect(output.problems.count == 10_000 - SignalInbox.maxHeldChunks)
        guard case .record(let first)? = output.problems.first else { return }
        #expect(first.kind == .tooManyHeldChunks && first.recordName == "IC_flood_\(SignalInbox.maxHeldChunks + 1)")
    }

    /// The crash of issue #13: the other user's session record names `Int64.max`. The negotiator
    /// reports it, starts its own epoch from its clock, and saves over the hostile version's tag.
    @Test func aSessionWithTheLargestEpochDoesNotPinTheNextEpoch() {
        var n = try! CallNegotiator(roomID: room, myUserID: "_a11ce", remoteUserID: "_b0b", zone: zone, seed: 1)
        _ = n.outputs(after: .startCall, now: t0)
        let actions = n.outputs(after: .lookedUp([.found(session(epoch: .max, tag: "evil"))]), now: t0)
        #expect(actions.contains {
            if case .rejected(.record(let e)) = $0 { e.kind == .epochTooFarAhead } else { false }
        })
        #expect(n.inbox.counters.malformed == 1)
        #expect(n.activeEpoch == CallEpoch(milliseconds: epoch) && n.inbox.floor == CallEpoch(milliseconds: epoch))
        let saved = actions.compactMap { a -> [Record]? in
            if case .modify(let operations, _) = a { operations.compactMap(\.record) } else { nil }
        }.flatMap { $0 }
        let ours = saved.first { $0.recordType == SignalRecordType.session }
        #expect(ours?.recordChangeTag == "evil" && ours?.fields[SignalField.callEpoch] == .int64(epoch))
    }

    /// The same record met as the server's version in a conflict: reported and saved over.
    @Test func aConflictWithTheLargestEpochIsSavedOver() {
        var n = try! CallNegotiator(roomID: room, myUserID: "_a11ce", remoteUserID: "_b0b", zone: zone, seed: 1)
        _ = n.outputs(after: .startCall, now: t0)
        let first = n.outputs(after: .lookedUp([]), now: t0)
        let saves = first.compactMap { a -> [Record]? in
            if case .modify(let operations, _) = a { operations.compactMap(\.record) } else { nil }
        }.flatMap { $0 }
        let server = session(epoch: .max, tag: "evil")
        let result = ModifyRecordsResult(results: saves.map { record in
            record.recordType == SignalRecordType.session
                ? .failed(record.id, StoreError(.serverRecordChanged, "changed", serverRecord: server))
                : .failed(record.id, StoreError(.batchRequestFailed, "atomic"))
        })
        let actions = n.outputs(after: .modified(result), now: t0)
        #expect(actions.contains { if case .rejected = $0 { true } else { false } })
        #expect(n.activeEpoch == CallEpoch(milliseconds: epoch) && n.epochClock.last == CallEpoch(milliseconds: epoch))
        let retried = actions.compactMap { a -> [Record]? in
            if case .modify(let operations, _) = a { operations.compactMap(\.record) } else { nil }
        }.flatMap { $0 }.first { $0.recordType == SignalRecordType.session }
        #expect(retried?.recordChangeTag == "evil")
    }

    /// Through the negotiator, every dropped record becomes a `.rejected` action (the peer logs it).
    @Test func theNegotiatorReportsEveryDroppedRecord() throws {
        var n = try! CallNegotiator(roomID: room, myUserID: "_b0b", remoteUserID: "_a11ce", zone: zone, seed: 1)
        _ = n.outputs(after: .startCall, now: t0)
        _ = n.outputs(after: .lookedUp([]), now: t0)
        let hostile = [try offer(name: "SE_a", epoch: .int64(.max)), try offer(name: "SE_b", epoch: .int64(-5)),
                       chunk(seq: .int64(-1), epoch: epoch, name: "IC_c")]
        let actions = n.outputs(after: .recordsFetched(hostile, deleted: []), now: t0)
        let names = actions.compactMap { a -> String? in
            if case .rejected(.record(let e)) = a { e.recordName } else { nil }
        }
        #expect(names.sorted() == ["IC_c", "SE_a", "SE_b"])
        #expect(n.inbox.counters.malformed == 3 && n.state == .waitingForOffer)
    }
}
