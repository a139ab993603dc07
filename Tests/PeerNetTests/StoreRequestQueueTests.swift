import PeerNet
import RecordStore
import Signaling
import Testing

/// The runner's store requests: several in flight, bounded, same-record requests in order.
@Suite struct StoreRequestQueueTests {
    let zone = ZoneID(zoneName: "room_q", ownerName: "alice")

    func save(_ name: String) -> StoreRequest {
        let record = Record(recordType: "SignalEnvelope", id: RecordID(recordName: name, zoneID: zone))
        return StoreRequest(scope: .private, .modifyRecords(ModifyRecordsRequest(saves: [record])))
    }

    func delete(_ name: String) -> StoreRequest {
        StoreRequest(scope: .private, .modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: name,
                                                                                              zoneID: zone)])))
    }

    var fetch: StoreRequest { StoreRequest(scope: .private, .fetchZoneChanges(zone, since: nil, resultsLimit: nil)) }

    @Test func neverMoreInFlightThanTheLimit() {
        var queue = StoreRequestQueue<Int>(limit: 4)
        for i in 0..<10 { queue.enqueue(save("SE_\(i)"), tag: i) }
        var started: [StoreRequestQueue<Int>.Ticket] = []
        while let (ticket, _, _) = queue.start() { started.append(ticket) }
        #expect(started.count == 4)
        #expect(queue.inFlightCount == 4 && queue.waitingCount == 6)
        queue.finish(started[2])
        #expect(queue.start()?.tag == 4)
        #expect(queue.start() == nil)
        #expect(queue.peakInFlight == 4)
    }

    @Test func aLimitOfOneRunsRequestsOneAfterTheOther() {
        var queue = StoreRequestQueue<Int>(limit: 1)
        queue.enqueue(fetch, tag: 0)
        queue.enqueue(fetch, tag: 1)
        let first = queue.start()
        #expect(first?.tag == 0)
        #expect(queue.start() == nil)
        queue.finish(first!.ticket)
        #expect(queue.start()?.tag == 1)
    }

    @Test func savesOfTheSameRecordStayInOrderWhileOthersPass() {
        var queue = StoreRequestQueue<String>(limit: 4)
        queue.enqueue(save("SS_a"), tag: "session v1")
        queue.enqueue(save("SS_a"), tag: "session v2")
        queue.enqueue(save("SE_offer"), tag: "offer")
        queue.enqueue(fetch, tag: "fetch")
        queue.enqueue(delete("SS_a"), tag: "session delete")
        let v1 = queue.start()
        #expect(v1?.tag == "session v1")
        // The second save of the session waits for the first; the offer and the fetch do not.
        #expect(queue.start()?.tag == "offer")
        #expect(queue.start()?.tag == "fetch")
        #expect(queue.start() == nil)
        #expect(queue.inFlightCount == 3)
        queue.finish(v1!.ticket)
        let v2 = queue.start()
        #expect(v2?.tag == "session v2")
        // The delete came after v2: it does not overtake it.
        #expect(queue.start() == nil)
        queue.finish(v2!.ticket)
        #expect(queue.start()?.tag == "session delete")
    }

    @Test func aWaitingRequestOnARecordHoldsBackLaterOnesOnIt() {
        // v1 in flight, v2 waits for it; a lookup of the same record asked after v2 must not
        // start before v2 even when the limit leaves room.
        var queue = StoreRequestQueue<Int>(limit: 8)
        queue.enqueue(save("IC_1"), tag: 1)
        queue.enqueue(save("IC_1"), tag: 2)
        queue.enqueue(StoreRequest(scope: .private, .lookupRecords([RecordID(recordName: "IC_1", zoneID: zone)])),
                      tag: 3)
        let first = queue.start()
        #expect(first?.tag == 1)
        #expect(queue.start() == nil)
        queue.finish(first!.ticket)
        let second = queue.start()
        #expect(second?.tag == 2)
        #expect(queue.start() == nil)
        queue.finish(second!.ticket)
        #expect(queue.start()?.tag == 3)
        #expect(queue.isIdle == false)
    }

    @Test func fetchesOfTwoPathsOverlap() {
        var queue = StoreRequestQueue<Int>(limit: 4)
        queue.enqueue(fetch, tag: 0)
        queue.enqueue(StoreRequest(scope: .private, .fetchDatabaseChanges(since: nil)), tag: 1)
        #expect(queue.start()?.tag == 0)
        #expect(queue.start()?.tag == 1)
        #expect(queue.inFlightCount == 2)
    }
}
