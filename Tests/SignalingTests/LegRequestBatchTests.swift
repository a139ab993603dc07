// The legs' requests of one event, batched (docs/PROTOCOL.md §11.3): lookups of several pairs in
// one request, non-atomic saves and deletions (of any operation types) in one, each atomic publication on its
// own; answers split back by record name, whole-request failures to every leg.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Leg request batches")
struct LegRequestBatchTests {
    private let zone = ZoneID(zoneName: "room_batc0001", ownerName: "_own")
    private let b = LegID(remote: "_b", generation: 1)
    private let c = LegID(remote: "_c", generation: 2)

    private func id(_ name: String) -> RecordID { RecordID(recordName: name, zoneID: zone) }
    private func record(_ name: String) -> Record { Record(recordType: SignalRecordType.iceChunk, id: id(name)) }

    @Test func lookupsAndSavesOfSeveralLegsShareRequestsButPublicationsDoNot() {
        let requests = [
            LegRequest(leg: b, action: .lookup([id("SS_b")])),
            LegRequest(leg: c, action: .modify([.create(record("SE_c")), .create(record("SS_c"))], atomic: true)),
            LegRequest(leg: c, action: .lookup([id("SS_c")])),
            LegRequest(leg: b, action: .modify([.create(record("IC_b"))], atomic: false)),
            LegRequest(leg: c, action: .modify([.forceDelete(id("IC_c_old"))], atomic: false)),
        ]
        let batches = LegRequestBatch.batches(requests, scope: .shared)
        #expect(batches.map(\.1) == [[requests[1]], [requests[0], requests[2]], [requests[3], requests[4]]])
        #expect(batches[0].0 == StoreRequest(scope: .shared, .modifyRecords(ModifyRecordsRequest(
            operations: [.create(record("SE_c")), .create(record("SS_c"))], atomic: true))))
        #expect(batches[1].0 == StoreRequest(scope: .shared, .lookupRecords([id("SS_b"), id("SS_c")])))
        #expect(batches[2].0 == StoreRequest(scope: .shared, .modifyRecords(ModifyRecordsRequest(
            operations: [.create(record("IC_b")), .forceDelete(id("IC_c_old"))], atomic: false))))
    }

    @Test func answersAreSplitByRecordName() {
        let lookups = [LegRequest(leg: b, action: .lookup([id("SS_b")])),
                       LegRequest(leg: c, action: .lookup([id("SS_c")]))]
        let missing = StoreError(.unknownItem, "none")
        let looked = LegRequestBatch.split(.lookedUp([.found(record("SS_b")), .failed(id("SS_c"), missing)]),
                                           among: lookups)
        #expect(looked.map(\.1) == [.lookedUp([.found(record("SS_b"))]), .lookedUp([.failed(id("SS_c"), missing)])])

        let saves = [LegRequest(leg: b, action: .modify([.create(record("IC_b"))], atomic: false)),
                     LegRequest(leg: c, action: .modify([.forceDelete(id("IC_c"))], atomic: false))]
        let modified = LegRequestBatch.split(.modified(ModifyRecordsResult(results: [
            .saved(record("IC_b")), .deleted(id("IC_c"))])), among: saves)
        #expect(modified.map(\.1) == [.modified(ModifyRecordsResult(results: [.saved(record("IC_b"))])),
                                      .modified(ModifyRecordsResult(results: [.deleted(id("IC_c"))]))])

        let busy = StoreError(.zoneBusy, "busy")
        #expect(LegRequestBatch.split(.failed(busy), among: saves).map(\.1)
                == saves.map { .requestFailed($0.action, busy) })
        // An answer of the wrong length fails every leg rather than handing one another's result.
        #expect(LegRequestBatch.split(.lookedUp([.found(record("SS_b"))]), among: lookups).allSatisfy {
            if case .requestFailed = $0.1 { true } else { false }
        })
    }

    @Test func aBatchStaysWithinTheRequestLimits() {
        let many = (0..<450).map { i in
            LegRequest(leg: i.isMultiple(of: 2) ? b : c, action: .modify([.create(record("IC_\(i)"))], atomic: false))
        }
        let batches = LegRequestBatch.batches(many, scope: .private)
        #expect(batches.map(\.1.count) == [200, 200, 50])
    }
}
