import Testing
@testable import RecordStore
import ZoneCore

/// The sans-I/O core of the PostgreSQL backend: replicas that follow one log agree, writes are
/// decided at the head, and a log they cannot follow is refused, never misapplied.
@Suite("Shared log replica")
struct SharedLogReplicaTests {
    let room = ZoneID(zoneName: "room_a")
    let now = Instant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

    func ctx(_ device: String = "d") -> RequestContext {
        RequestContext(user: "alice", deviceID: device, now: now)
    }

    func note(_ name: String, tag: String? = nil) -> Record {
        var r = Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room))
        r.recordChangeTag = tag
        return r
    }

    /// A write batch on `replica` at the head; returns the entry it appends.
    func write(_ replica: inout SharedLogReplica,
               _ op: (inout StoreEngine, RequestContext) throws(StoreError) -> Void) -> (UInt64, [UInt8])? {
        _ = replica.run(ctx(), op)
        return replica.sealBatch().map { ($0.sequence, $0.payload) }
    }

    func createRoom(_ replica: inout SharedLogReplica) -> (UInt64, [UInt8])? {
        write(&replica) { e, c throws(StoreError) in
            _ = try e.modifyZones(save: [room], delete: [], scope: .private, c)
        }
    }

    func lookup(_ replica: inout SharedLogReplica, _ name: String) throws -> [LookupResult] {
        try replica.read(ctx()) { e, c throws(StoreError) in
            try e.lookupRecords([RecordID(recordName: name, zoneID: room)], scope: .private, c)
        }.get()
    }

    @Test("an entry written by one replica, applied by another, gives the same records and change tags")
    func followers() throws {
        var a = SharedLogReplica(configuration: .default), b = SharedLogReplica(configuration: .default)
        let e1 = try #require(createRoom(&a))
        let e2 = try #require(write(&a) { e, c throws(StoreError) in
            _ = try e.modifyRecords(ModifyRecordsRequest(saves: [note("r")]), scope: .private, c)
        })
        #expect(e1.0 == 1 && e2.0 == 2)
        _ = try b.apply(sequence: e1.0, payload: e1.1)
        _ = try b.apply(sequence: e2.0, payload: e2.1)
        let fromA = try lookup(&a, "r"), fromB = try lookup(&b, "r")
        #expect(fromA == fromB)
        #expect(fromB.first?.record?.recordChangeTag != nil)
        // Applying an entry again (it came back from the log) changes nothing.
        #expect(try b.apply(sequence: e2.0, payload: e2.1).isEmpty)
        #expect(b.appliedSequence == 2)
    }

    @Test("a write with a stale tag, made at the head after another replica's, gets serverRecordChanged")
    func conflictAtHead() throws {
        var a = SharedLogReplica(configuration: .default), b = SharedLogReplica(configuration: .default)
        let z = try #require(createRoom(&a))
        let first = try #require(write(&a) { e, c throws(StoreError) in
            _ = try e.modifyRecords(ModifyRecordsRequest(saves: [note("r")]), scope: .private, c)
        })
        for entry in [z, first] { _ = try b.apply(sequence: entry.0, payload: entry.1) }
        let tag = try #require(try lookup(&a, "r").first?.record?.recordChangeTag)
        // A saves over tag first; B, catching up to the head before its own batch, then loses.
        let winner = try #require(write(&a) { e, c throws(StoreError) in
            _ = try e.modifyRecords(ModifyRecordsRequest(saves: [note("r", tag: tag)]), scope: .private, c)
        })
        _ = try b.apply(sequence: winner.0, payload: winner.1)
        let outcome = b.run(ctx("b")) { e, c throws(StoreError) in
            try e.modifyRecords(ModifyRecordsRequest(saves: [note("r", tag: tag)]), scope: .private, c)
        }
        #expect(try outcome.get().failures.first?.1.code == .serverRecordChanged)
        #expect(b.sealBatch() == nil, "a refused write appends nothing")
    }

    @Test("a gap in the log or a damaged entry is refused, and nothing is applied")
    func divergence() throws {
        var a = SharedLogReplica(configuration: .default), b = SharedLogReplica(configuration: .default)
        let e1 = try #require(createRoom(&a))
        #expect(throws: SharedLogReplica.Divergence.self) { try b.apply(sequence: 2, payload: e1.1) }
        for cut in [0, 1, e1.1.count / 2, e1.1.count - 1] {
            #expect(throws: SharedLogReplica.Divergence.self) {
                try b.apply(sequence: 1, payload: Array(e1.1.prefix(cut)))
            }
        }
        #expect(throws: SharedLogReplica.Divergence.self) { try b.apply(sequence: 1, payload: e1.1 + [0]) }
        #expect(b.appliedSequence == 0)
        _ = try b.apply(sequence: 1, payload: e1.1)
        #expect(b.appliedSequence == 1)
    }

    @Test("the notifications an entry owes devices travel with it")
    func notificationsTravel() throws {
        var a = SharedLogReplica(configuration: .default), b = SharedLogReplica(configuration: .default)
        var entries: [(UInt64, [UInt8])] = []
        entries.append(try #require(createRoom(&a)))
        entries.append(try #require(write(&a) { e, c throws(StoreError) in
            _ = try e.modifySubscriptions(save: [Subscription(subscriptionID: "db", kind: .database)], delete: [],
                                          scope: .private, c)
        }))
        _ = a.run(ctx("listener")) { e, c throws(StoreError) in try e.registerDevice(c) }
        entries.append(try #require(a.sealBatch().map { ($0.sequence, $0.payload) }))
        entries.append(try #require(write(&a) { e, c throws(StoreError) in
            _ = try e.modifyRecords(ModifyRecordsRequest(saves: [note("r")]), scope: .private, c)
        }))
        var owed: [DeviceNotification] = []
        for e in entries { owed += try b.apply(sequence: e.0, payload: e.1) }
        #expect(owed.map(\.deviceID) == ["listener"])
        #expect(owed.first?.notification.subscriptionID == "db")
    }
}
