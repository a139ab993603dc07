import Testing
import RecordStore
import ZoneCore

/// docs/STORE.md "Model": zone-wide shares, participants, acceptance, access.
@Suite("Contract: zone-wide shares")
struct ShareContractTests {
    let room = ZoneID(zoneName: "room_a")
    let shared = ZoneID(zoneName: "room_a", ownerName: "alice")

    private func setUp(_ backend: ContractBackend, bob permission: SharePermission = .readWrite)
        async throws -> (ContractStore, any StoreClient, any StoreClient)
    {
        let store = try await backend.makeStore()
        let alice = store.client("alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        try await alice.save([record("hello", ["v": .int64(1)])])
        _ = try await alice.createShare(zone: room, publicPermission: .none, participants: ["bob": permission])
        return (store, alice, store.client("bob"))
    }

    @Test("no access before acceptance; after it the zone is in the shared database", arguments: ContractBackend.allCases)
    func acceptanceGrantsAccess(_ backend: ContractBackend) async throws {
        let (_, _, bob) = try await setUp(backend)
        let before = try await bob.lookupRecords([RecordID(recordName: "hello", zoneID: shared)], scope: .shared)
        #expect(before[0].error?.code == .permissionFailure)
        #expect(try await bob.listZones(scope: .shared).isEmpty)
        _ = try await bob.acceptShare(zone: shared)
        #expect(try await bob.listZones(scope: .shared) == [shared])
        let after = try await bob.lookupRecords([RecordID(recordName: "hello", zoneID: shared)], scope: .shared)
        #expect(after[0].record?["v"] == .int64(1))
        let changes = try await bob.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .shared)
        #expect(changes.changedZones == [shared])
    }

    @Test("a user who is not a participant cannot accept", arguments: ContractBackend.allCases)
    func strangerCannotAccept(_ backend: ContractBackend) async throws {
        let (store, _, _) = try await setUp(backend)
        let error = await storeError { _ = try await store.client("eve").acceptShare(zone: shared) }
        #expect(error?.code == .permissionFailure)
    }

    @Test("accepting twice is a no-op", arguments: ContractBackend.allCases)
    func acceptIsIdempotent(_ backend: ContractBackend) async throws {
        let (_, _, bob) = try await setUp(backend)
        let first = try await bob.acceptShare(zone: shared)
        let token = try await bob.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .shared).syncToken
        let second = try await bob.acceptShare(zone: shared)
        #expect(first == second)
        let after = try await bob.fetchDatabaseChanges(since: token, resultsLimit: nil, scope: .shared)
        #expect(after.changedZones.isEmpty)
    }

    @Test("readOnly participants read but cannot write: permissionFailure", arguments: ContractBackend.allCases)
    func readOnlyParticipant(_ backend: ContractBackend) async throws {
        let (_, _, bob) = try await setUp(backend, bob: .readOnly)
        _ = try await bob.acceptShare(zone: shared)
        let read = try await bob.lookupRecords([RecordID(recordName: "hello", zoneID: shared)], scope: .shared)
        #expect(read[0].record != nil)
        let w = try await bob.modifyRecords(ModifyRecordsRequest(saves: [record("b", in: shared)]), scope: .shared)
        #expect(w.results[0].error?.code == .permissionFailure)
        let d = try await bob.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "hello", zoneID: shared)]),
                                            scope: .shared)
        #expect(d.results[0].error?.code == .permissionFailure)
    }

    @Test("readWrite participants write into the owner's zone", arguments: ContractBackend.allCases)
    func readWriteParticipant(_ backend: ContractBackend) async throws {
        let (_, alice, bob) = try await setUp(backend)
        _ = try await bob.acceptShare(zone: shared)
        try await bob.save([record("from-bob", in: shared, ["v": .string("hi")])], scope: .shared)
        let seen = try await alice.lookupRecords([RecordID(recordName: "from-bob", zoneID: room)], scope: .private)
        #expect(seen[0].record?.modified?.userRecordName == "bob")
    }

    @Test("removing a participant removes access and reports the zone deleted", arguments: ContractBackend.allCases)
    func removeParticipant(_ backend: ContractBackend) async throws {
        let (_, alice, bob) = try await setUp(backend)
        _ = try await bob.acceptShare(zone: shared)
        let token = try await bob.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .shared).syncToken
        _ = try await alice.updateShare(zone: room, ShareUpdate(removeParticipants: ["bob"]))
        let r = try await bob.lookupRecords([RecordID(recordName: "hello", zoneID: shared)], scope: .shared)
        #expect(r[0].error?.code == .permissionFailure)
        let changes = try await bob.fetchDatabaseChanges(since: token, resultsLimit: nil, scope: .shared)
        #expect(changes.deletedZones == [shared])
        #expect(try await bob.listZones(scope: .shared).isEmpty)
    }

    @Test("deleting the share removes every participant's access", arguments: ContractBackend.allCases)
    func deleteShare(_ backend: ContractBackend) async throws {
        let (_, alice, bob) = try await setUp(backend)
        _ = try await bob.acceptShare(zone: shared)
        try await alice.deleteShare(zone: room)
        let r = try await bob.lookupRecords([RecordID(recordName: "hello", zoneID: shared)], scope: .shared)
        #expect(r[0].error?.code == .permissionFailure)
        let error = await storeError { _ = try await alice.fetchShare(zone: room, scope: .private) }
        #expect(error?.code == .unknownItem)
    }

    @Test("at most one share per zone", arguments: ContractBackend.allCases)
    func oneSharePerZone(_ backend: ContractBackend) async throws {
        let (_, alice, _) = try await setUp(backend)
        let error = await storeError { _ = try await alice.createShare(zone: room, publicPermission: .none, participants: [:]) }
        #expect(error?.code == .alreadyExists)
    }

    @Test("publicPermission lets anyone accept, with that permission", arguments: ContractBackend.allCases)
    func publicPermission(_ backend: ContractBackend) async throws {
        let (store, alice, _) = try await setUp(backend)
        _ = try await alice.updateShare(zone: room, ShareUpdate(publicPermission: .readOnly))
        let carol = store.client("carol")
        let share = try await carol.acceptShare(zone: shared)
        #expect(share.participants["carol"]?.permission == .readOnly)
        let w = try await carol.modifyRecords(ModifyRecordsRequest(saves: [record("c", in: shared)]), scope: .shared)
        #expect(w.results[0].error?.code == .permissionFailure)
    }

    @Test("leaving: deleting the zone from the shared database drops only the participant", arguments: ContractBackend.allCases)
    func participantLeaves(_ backend: ContractBackend) async throws {
        let (_, alice, bob) = try await setUp(backend)
        _ = try await bob.acceptShare(zone: shared)
        let r = try await bob.modifyZones(save: [], delete: [shared], scope: .shared)
        #expect(r[0].error == nil)
        #expect(try await bob.listZones(scope: .shared).isEmpty)
        #expect(try await alice.listZones(scope: .private).contains(ZoneID(zoneName: "room_a", ownerName: "alice")))
    }

    @Test("deleting the zone removes it from participants' shared databases", arguments: ContractBackend.allCases)
    func ownerDeletesZone(_ backend: ContractBackend) async throws {
        let (_, alice, bob) = try await setUp(backend)
        _ = try await bob.acceptShare(zone: shared)
        let token = try await bob.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .shared).syncToken
        _ = try await alice.modifyZones(save: [], delete: [room], scope: .private)
        let changes = try await bob.fetchDatabaseChanges(since: token, resultsLimit: nil, scope: .shared)
        #expect(changes.deletedZones == [shared])
        let error = await storeError { _ = try await bob.fetchZoneChanges(shared, since: nil, resultsLimit: nil, scope: .shared) }
        #expect(error?.code == .zoneNotFound)
    }

    @Test("a shared zone is queried once its share is accepted; the owner queries it in the private database",
          arguments: ContractBackend.allCases)
    func queriesOnShared(_ backend: ContractBackend) async throws {
        let (_, alice, bob) = try await setUp(backend)
        let before = await storeError {
            _ = try await bob.queryRecords(recordType: "Note", in: shared, filters: [:], scope: .shared)
        }
        #expect(before?.code == .permissionFailure)
        _ = try await bob.acceptShare(zone: shared)
        let seen = try await bob.queryRecords(recordType: "Note", in: shared, filters: ["v": .int64(1)], scope: .shared)
        #expect(seen.map(\.id.recordName) == ["hello"])
        let found = try await alice.queryRecords(recordType: "Note", in: room, filters: ["v": .int64(1)], scope: .private)
        #expect(found.map(\.id.recordName) == ["hello"])
    }
}
