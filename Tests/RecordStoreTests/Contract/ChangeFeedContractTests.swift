import Testing
import RecordStore
import ZoneCore

/// docs/STORE.md "Reads and change feeds": zone and database changes, tokens.
@Suite("Contract: change feeds and tokens")
struct ChangeFeedContractTests {
    let room = ZoneID(zoneName: "room_a")

    private func setUp(_ backend: ContractBackend, configuration: StoreConfiguration = .default)
        async throws -> (ContractStore, any StoreClient)
    {
        let store = try await backend.makeStore(configuration: configuration)
        let alice = store.client("alice")
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        return (store, alice)
    }

    @Test("no token: every live record, no deletions", arguments: ContractBackend.allCases)
    func wholeHistory(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save([record("a"), record("b"), record("c")])
        _ = try await alice.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "b", zoneID: room)]),
                                          scope: .private)
        let all = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private)
        #expect(Set(all.changed.map(\.id.recordName)) == ["a", "c"])
        #expect(all.deleted.isEmpty)
        #expect(!all.moreComing)
    }

    @Test("with a token: only what changed since; a record changed several times comes once, latest",
          arguments: ContractBackend.allCases)
    func changesSinceToken(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        var a = try await alice.save([record("a", ["v": .int64(1)]), record("b")])[0]
        let token = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken
        for v in 2...4 {
            a["v"] = .int64(Int64(v))
            a = try await alice.save([a])[0]
        }
        _ = try await alice.modifyRecords(ModifyRecordsRequest(deletes: [RecordID(recordName: "b", zoneID: room)]),
                                          scope: .private)
        let changes = try await alice.fetchZoneChanges(room, since: token, resultsLimit: nil, scope: .private)
        #expect(changes.changed.map(\.id.recordName) == ["a"])
        #expect(changes.changed.first?["v"] == .int64(4))
        #expect(changes.deleted.map(\.id.recordName) == ["b"])
        #expect(changes.deleted.first?.recordType == "Note")
        let none = try await alice.fetchZoneChanges(room, since: changes.syncToken, resultsLimit: nil, scope: .private)
        #expect(none.changed.isEmpty && none.deleted.isEmpty && !none.moreComing)
    }

    @Test("resultsLimit pages with moreComing; every record exactly once", arguments: ContractBackend.allCases)
    func paging(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save((0..<25).map { record("r\($0)") })
        var token: ChangeToken?
        var seen: [String] = []
        var pages = 0
        repeat {
            let page = try await alice.fetchZoneChanges(room, since: token, resultsLimit: 10, scope: .private)
            #expect(page.changed.count <= 10)
            seen += page.changed.map(\.id.recordName)
            token = page.syncToken
            pages += 1
            if !page.moreComing { break }
        } while pages < 10
        #expect(pages == 3)
        #expect(seen.count == 25 && Set(seen).count == 25)
    }

    @Test("the server may return fewer than resultsLimit", arguments: ContractBackend.allCases)
    func serverPageCap(_ backend: ContractBackend) async throws {
        var config = StoreConfiguration()
        config.maxResultsPerPage = 5
        let (_, alice) = try await setUp(backend, configuration: config)
        try await alice.save((0..<12).map { record("r\($0)") })
        let page = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: 100, scope: .private)
        #expect(page.changed.count == 5 && page.moreComing)
        let all = try await alice.fetchAllZoneChanges(room, since: nil, scope: .private, resultsLimit: 100)
        #expect(all.changed.count == 12)
    }

    @Test("the default zone has no change feed", arguments: ContractBackend.allCases)
    func defaultZoneNoFeed(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let error = await storeError { _ = try await alice.fetchZoneChanges(.defaultZone, since: nil, resultsLimit: nil, scope: .private) }
        #expect(error?.code == .invalidArguments)
    }

    @Test("database changes: zones changed and deleted since the token", arguments: ContractBackend.allCases)
    func databaseChanges(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let other = ZoneID(zoneName: "room_b")
        _ = try await alice.modifyZones(save: [other], delete: [], scope: .private)
        let first = try await alice.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .private)
        #expect(Set(first.changedZones.map(\.zoneName)) == ["room_a", "room_b"])
        try await alice.save([record("x")])
        _ = try await alice.modifyZones(save: [], delete: [other], scope: .private)
        let next = try await alice.fetchDatabaseChanges(since: first.syncToken, resultsLimit: nil, scope: .private)
        #expect(next.changedZones.map(\.zoneName) == ["room_a"])
        #expect(next.deletedZones.map(\.zoneName) == ["room_b"])
        let quiet = try await alice.fetchDatabaseChanges(since: next.syncToken, resultsLimit: nil, scope: .private)
        #expect(quiet.changedZones.isEmpty && quiet.deletedZones.isEmpty)
    }

    @Test("tokens are per zone or per database, not interchangeable", arguments: ContractBackend.allCases)
    func tokensNotInterchangeable(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        let other = ZoneID(zoneName: "room_b")
        _ = try await alice.modifyZones(save: [other], delete: [], scope: .private)
        let zoneToken = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken
        let dbToken = try await alice.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .private).syncToken
        let e1 = await storeError { _ = try await alice.fetchZoneChanges(other, since: zoneToken, resultsLimit: nil, scope: .private) }
        #expect(e1?.code == .invalidArguments)
        let e2 = await storeError { _ = try await alice.fetchZoneChanges(room, since: dbToken, resultsLimit: nil, scope: .private) }
        #expect(e2?.code == .invalidArguments)
        let e3 = await storeError { _ = try await alice.fetchDatabaseChanges(since: zoneToken, resultsLimit: nil, scope: .private) }
        #expect(e3?.code == .invalidArguments)
        let e4 = await storeError {
            _ = try await alice.fetchZoneChanges(room, since: ChangeToken(rawValue: "not-a-token"), resultsLimit: nil, scope: .private)
        }
        #expect(e4?.code == .invalidArguments)
    }

    @Test("a token older than the retention window: changeTokenExpired", arguments: ContractBackend.allCases)
    func tokenRetention(_ backend: ContractBackend) async throws {
        var config = StoreConfiguration()
        config.tokenRetention = .seconds(3600)
        let (store, alice) = try await setUp(backend, configuration: config)
        let token = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken
        let dbToken = try await alice.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .private).syncToken
        store.clock.advance(by: .seconds(3599))
        _ = try await alice.fetchZoneChanges(room, since: token, resultsLimit: nil, scope: .private)
        store.clock.advance(by: .seconds(2))
        let e = await storeError { _ = try await alice.fetchZoneChanges(room, since: token, resultsLimit: nil, scope: .private) }
        #expect(e?.code == .changeTokenExpired)
        let e2 = await storeError { _ = try await alice.fetchDatabaseChanges(since: dbToken, resultsLimit: nil, scope: .private) }
        #expect(e2?.code == .changeTokenExpired)
    }

    @Test("a token from a deleted zone does not work on a new zone of the same name", arguments: ContractBackend.allCases)
    func tokenAcrossIncarnations(_ backend: ContractBackend) async throws {
        let (_, alice) = try await setUp(backend)
        try await alice.save([record("a")])
        let token = try await alice.fetchZoneChanges(room, since: nil, resultsLimit: nil, scope: .private).syncToken
        _ = try await alice.modifyZones(save: [], delete: [room], scope: .private)
        let gone = await storeError { _ = try await alice.fetchZoneChanges(room, since: token, resultsLimit: nil, scope: .private) }
        #expect(gone?.code == .zoneNotFound)
        _ = try await alice.modifyZones(save: [room], delete: [], scope: .private)
        // The new zone moves past the old token's position: only its incarnation tells them apart.
        try await alice.save([record("b"), record("c"), record("d")])
        let e = await storeError { _ = try await alice.fetchZoneChanges(room, since: token, resultsLimit: nil, scope: .private) }
        #expect(e?.code == .changeTokenExpired)
    }

    @Test("participants follow the owner's zone through the shared database", arguments: ContractBackend.allCases)
    func participantFeed(_ backend: ContractBackend) async throws {
        let (store, alice) = try await setUp(backend)
        _ = try await alice.createShare(zone: room, publicPermission: .none, participants: ["bob": .readWrite])
        let bob = store.client("bob")
        let shared = ZoneID(zoneName: "room_a", ownerName: "alice")
        _ = try await bob.acceptShare(zone: shared)
        let dbToken = try await bob.fetchDatabaseChanges(since: nil, resultsLimit: nil, scope: .shared).syncToken
        let token = try await bob.fetchZoneChanges(shared, since: nil, resultsLimit: nil, scope: .shared).syncToken
        try await alice.save([record("offer")])
        let db = try await bob.fetchDatabaseChanges(since: dbToken, resultsLimit: nil, scope: .shared)
        #expect(db.changedZones == [shared])
        let z = try await bob.fetchZoneChanges(shared, since: token, resultsLimit: nil, scope: .shared)
        #expect(z.changed.map(\.id.recordName) == ["offer"])
    }
}
