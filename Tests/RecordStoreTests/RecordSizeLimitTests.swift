import Testing
import ZoneCore
@testable import RecordStore

/// A record's fields are held to `maxRecordBytes` one by one, whether or not its request as a whole
/// fits in one record's limit (the engine counts them one by one only when it does not).
@Suite struct RecordSizeLimitTests {
    let room = ZoneID(zoneName: "room_a", ownerName: "alice")
    let alice = RequestContext(user: "alice", deviceID: "w", now: Instant(nanosecondsSinceEpoch: 1_000_000_000))

    private func engine() throws -> StoreEngine {
        var configuration = StoreConfiguration()
        configuration.maxRecordBytes = 100
        var engine = StoreEngine(configuration: configuration)
        _ = try engine.modifyZones(save: [room], delete: [], scope: .private, alice)
        return engine
    }

    /// A record `name` whose one field "f" holds `bytes` bytes (so `1 + bytes` of field data).
    private func record(_ name: String, bytes: Int) -> Record {
        Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room),
               fields: ["f": .bytes([UInt8](repeating: 7, count: bytes))])
    }

    @Test func aRecordPastTheLimitFailsAloneAndTheRestAreSaved() throws {
        var engine = try engine()
        let result = try engine.modifyRecords(
            ModifyRecordsRequest(saves: [record("small", bytes: 10), record("big", bytes: 150)], atomic: false),
            scope: .private, alice)
        #expect(result.savedRecords.map(\.id.recordName) == ["small"])
        #expect(result.failures.map(\.1.code) == [.limitExceeded])
        #expect(result.failures.map(\.1.message) == ["record big holds 151 bytes of fields; the limit is 100"])
    }

    @Test func recordsEachWithinTheLimitAreSavedWhateverTheirRequestHolds() throws {
        var engine = try engine()
        // Together past one record's limit: each is counted on its own, and each fits.
        let many = try engine.modifyRecords(
            ModifyRecordsRequest(saves: [record("a", bytes: 90), record("b", bytes: 99)]), scope: .private, alice)
        #expect(many.savedRecords.map(\.id.recordName) == ["a", "b"] && many.failures.isEmpty)
        // Together within it: so is each.
        let few = try engine.modifyRecords(
            ModifyRecordsRequest(saves: [record("c", bytes: 40), record("d", bytes: 40)]), scope: .private, alice)
        #expect(few.savedRecords.map(\.id.recordName) == ["c", "d"] && few.failures.isEmpty)
        // Exactly at the limit, alone in its request.
        let exact = try engine.modifyRecords(ModifyRecordsRequest(saves: [record("e", bytes: 99)]), scope: .private, alice)
        #expect(exact.failures.isEmpty)
        let over = try engine.modifyRecords(ModifyRecordsRequest(saves: [record("f", bytes: 100)]), scope: .private, alice)
        #expect(over.failures.map(\.1.code) == [.limitExceeded])
    }
}
