// Garbage collection's rules (spec §3), by hand.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Garbage collection")
struct GarbageCollectorTests {
    private let t0 = Instant.seconds(1_700_000_000)
    private let zone = ZoneID(zoneName: "room_gc000001", ownerName: "_a")

    private func summary(_ name: String, epoch: Int64, owner: String, ageMinutes: Int64) -> SignalRecordSummary {
        SignalRecordSummary(id: RecordID(recordName: name, zoneID: zone), recordType: SignalRecordType.envelope,
                            callEpoch: CallEpoch(milliseconds: epoch), ownerUserID: owner,
                            modifiedMs: t0.millisecondsSinceEpoch - ageMinutes * 60_000)
    }

    private func collector() -> SignalGarbageCollector {
        var gc = SignalGarbageCollector(myUserID: "_a")
        gc.observe([
            summary("mine-old", epoch: 10, owner: "_a", ageMinutes: 1),
            summary("theirs-old", epoch: 10, owner: "_b", ageMinutes: 1),
            summary("theirs-expired", epoch: 10, owner: "_b", ageMinutes: 11),
            summary("mine-connected", epoch: 20, owner: "_a", ageMinutes: 1),
            summary("mine-active-expired", epoch: 30, owner: "_a", ageMinutes: 11),
            summary("theirs-newer-expired", epoch: 40, owner: "_b", ageMinutes: 11),
        ])
        return gc
    }

    private func names(_ batches: [[RecordID]]) -> [String] { batches.flatMap { $0.map(\.recordName) } }

    @Test func ownOlderThanConnectedAndExpiredGoNeverTheActiveEpoch() {
        var gc = collector()
        gc.epochConnected(now: t0)
        let doomed = names(gc.sweep(now: t0, activeEpoch: CallEpoch(milliseconds: 30),
                                    connectedEpoch: CallEpoch(milliseconds: 20)))
        #expect(doomed == ["mine-old", "theirs-expired"])
    }

    @Test func withoutACallOnlyTheTTLApplies() {
        var gc = collector()
        gc.epochConnected(now: t0)
        let doomed = names(gc.sweep(now: t0, activeEpoch: nil, connectedEpoch: nil))
        #expect(doomed == ["mine-active-expired", "theirs-expired", "theirs-newer-expired"])
    }

    @Test func sweepsRunWhenDueAndNeverTwiceForOneRecord() {
        var gc = collector()
        gc.start(now: t0)
        #expect(gc.nextDeadline == t0 + .seconds(60))
        #expect(gc.sweep(now: t0, activeEpoch: nil, connectedEpoch: nil).isEmpty)  // not due yet
        let first = names(gc.sweep(now: t0 + .seconds(60), activeEpoch: nil, connectedEpoch: nil))
        #expect(first.count == 3 && gc.isDeleting("theirs-expired"))
        #expect(gc.sweep(now: t0 + .seconds(120), activeEpoch: nil, connectedEpoch: nil).isEmpty)  // in flight
        gc.deleted(RecordID(recordName: "theirs-expired", zoneID: zone))
        gc.deleteFailed(RecordID(recordName: "mine-active-expired", zoneID: zone), StoreError(.unknownItem, "gone"))
        gc.deleteFailed(RecordID(recordName: "theirs-newer-expired", zoneID: zone), StoreError(.zoneBusy, "busy"))
        #expect(gc.counters.deletions == 1 && gc.counters.alreadyGone == 1 && gc.counters.failures == 1)
        #expect(names(gc.sweep(now: t0 + .seconds(180), activeEpoch: nil, connectedEpoch: nil))
                == ["theirs-newer-expired"])
        gc.forget([RecordID(recordName: "mine-old", zoneID: zone)])
        #expect(gc.knownRecords == 3)
    }

    @Test func deletionsAreSplitIntoRequestsOf200() {
        var gc = SignalGarbageCollector(myUserID: "_a")
        gc.observe((0..<1000).map { summary("r\($0)", epoch: 1, owner: "_a", ageMinutes: 0) })
        gc.epochConnected(now: t0)
        let five = CallEpoch(milliseconds: 5)
        let batches = gc.sweep(now: t0, activeEpoch: five, connectedEpoch: five)
        #expect(batches.map(\.count) == [200, 200, 200, 200, 200])
    }
}
