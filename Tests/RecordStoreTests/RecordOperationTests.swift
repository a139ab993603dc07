// The engine's record operations where the order of a request's operations matters, what a
// cascade journals, and the references a restarted store still knows (its index is rebuilt from
// the journal and from a snapshot). The operations themselves, over the JSON API on every
// backend: Tests/CloudKitConformanceTests.
import Foundation
@testable import RecordStore
import Testing
import ZoneCore

@Suite("Record operations in the engine")
struct RecordOperationTests {
    let room = EngineFixture.room
    let alice = EngineFixture.author

    private func note(_ name: String, _ fields: RecordFields = [:]) -> Record {
        Record(recordType: "Note", id: RecordID(recordName: name, zoneID: room), fields: fields)
    }

    private func referring(_ name: String, to target: String, _ action: ReferenceAction) -> Record {
        note(name, ["to": .reference(Reference(RecordID(recordName: target, zoneID: room), action: action))])
    }

    private func codes(_ result: ModifyRecordsResult) -> [StoreError.Code?] { result.results.map(\.error?.code) }

    @Test func aValidatedTargetMustComeFirstInTheRequest() throws {
        var engine = try EngineFixture.roomWithListener()
        let late = try engine.modifyRecords(ModifyRecordsRequest(operations: [
            .create(referring("s", to: "t", .validate)), .create(note("t"))]), scope: .private, alice)
        #expect(codes(late) == [.referenceViolation, .batchRequestFailed])
        let first = try engine.modifyRecords(ModifyRecordsRequest(operations: [
            .create(note("t")), .create(referring("s", to: "t", .validate))]), scope: .private, alice)
        #expect(codes(first) == [nil, nil])
    }

    @Test func aDeletionTakesAlongWhatAnEarlierOperationMadeReferToIt() throws {
        var engine = try EngineFixture.roomWithListener()
        _ = try engine.modifyRecords(ModifyRecordsRequest(operations: [.create(note("t"))]), scope: .private, alice)
        _ = engine.drainMutations()
        let result = try engine.modifyRecords(ModifyRecordsRequest(operations: [
            .create(referring("s", to: "t", .deleteSelf)), .delete(RecordID(recordName: "t", zoneID: room))]),
            scope: .private, alice)
        #expect(codes(result) == [nil, nil])
        // Journalled as saved, then deleted with its target: a replay ends where the store did.
        let mutations = engine.drainMutations()
        #expect(mutations.count == 3)
        guard case .deleteRecord(let cascaded, "Note", _, _) = mutations.last else {
            Issue.record("no cascaded deletion: \(mutations)")
            return
        }
        #expect(cascaded.recordName == "s")
        let left = try engine.lookupRecords([RecordID(recordName: "s", zoneID: room)], scope: .private, alice)
        #expect(left[0].error?.code == .unknownItem)
    }

    @Test func referencesWithoutAnOwnerNameTheZoneOfTheRecord() throws {
        var engine = try EngineFixture.roomWithListener()
        let unowned = Reference(RecordID(recordName: "t", zoneID: ZoneID(zoneName: "room_a")), action: .deleteSelf)
        let result = try engine.modifyRecords(ModifyRecordsRequest(operations: [
            .create(note("t")), .create(note("s", ["to": .list([.reference(unowned)])]))]), scope: .private, alice)
        let saved = try #require(result.results.last?.record)
        #expect(saved.fields["to"] == .list([.reference(Reference(RecordID(recordName: "t", zoneID: room),
                                                                  action: .deleteSelf))]))
        _ = try engine.modifyRecords(ModifyRecordsRequest(operations: [.forceDelete(RecordID(recordName: "t",
                                                                                             zoneID: room))]),
                                     scope: .private, alice)
        let gone = try engine.lookupRecords([saved.id], scope: .private, alice)
        #expect(gone[0].error?.code == .unknownItem)
    }

    @Test("CKModifyRecordsOperation's shape becomes Web Services operations")
    func savePolicies() {
        let fresh = note("a")
        var tagged = note("b")
        tagged.recordChangeTag = "7"
        let id = RecordID(recordName: "c", zoneID: room)
        #expect(ModifyRecordsRequest(saves: [fresh, tagged], deletes: [id]).operations
                == [.create(fresh), .replace(tagged), .forceDelete(id)])
        #expect(ModifyRecordsRequest(saves: [tagged], savePolicy: .changedKeys).operations == [.forceUpdate(tagged)])
        #expect(ModifyRecordsRequest(saves: [tagged], savePolicy: .allKeys).operations == [.forceReplace(tagged)])
        #expect(ModifyRecordsRequest(saves: [fresh]).atomic)
    }

    @Test("a restarted store still knows who validates whom: from its journal and from its snapshot",
          arguments: [false, true])
    func referencesSurviveARestart(compacted: Bool) async throws {
        let dir = NSTemporaryDirectory() + "zonertc-references-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func open(compactAt: Int) throws -> EmbeddedStore {
            var options = EmbeddedStore.Options(directory: dir)
            options.automaticPush = false
            options.compactionThreshold = compactAt
            return try EmbeddedStore(options: options, clock: ManualClock())
        }
        var store = try open(compactAt: 64 * 1024 * 1024)
        let client = store.client(user: "alice")
        _ = try await client.modifyZones(save: [room], delete: [], scope: .private)
        _ = try await client.modifyRecords(ModifyRecordsRequest(operations: [
            .create(note("t")), .create(referring("s", to: "t", .validate)),
            .create(referring("d", to: "t", .deleteSelf))]), scope: .private)
        store.close()
        store = try open(compactAt: compacted ? 1 : 64 * 1024 * 1024)
        if compacted {
            // Past the threshold, this write compacts; the next open starts from the snapshot.
            _ = try await store.client(user: "alice").modifyRecords(
                ModifyRecordsRequest(operations: [.create(note("x"))]), scope: .private)
            store.close()
            store = try open(compactAt: 64 * 1024 * 1024)
            #expect(store.recovered?.snapshotBytes ?? 0 > 0)
        }
        let reopened = store.client(user: "alice")
        let target = RecordID(recordName: "t", zoneID: room)
        let blocked = try await reopened.modifyRecords(ModifyRecordsRequest(operations: [.forceDelete(target)]),
                                                       scope: .private)
        #expect(codes(blocked) == [.referenceViolation])
        let freed = try await reopened.modifyRecords(ModifyRecordsRequest(operations: [
            .forceDelete(RecordID(recordName: "s", zoneID: room)), .forceDelete(target)]), scope: .private)
        #expect(codes(freed) == [nil, nil])
        let cascaded = try await reopened.lookupRecords([RecordID(recordName: "d", zoneID: room)], scope: .private)
        #expect(cascaded[0].error?.code == .unknownItem)
        store.close()
    }
}
