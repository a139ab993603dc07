// Room setup (spec §1, §6): the owner creates the zone, the Room record and the share; the
// participant accepts (idempotent); each resolves its database once.
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Room setup")
struct RoomSetupTests {
    private let room = try! RoomID("room_setup001")

    private func store() throws -> EmbeddedStore {
        try EmbeddedStore(options: .inMemoryForTests, clock: ManualClock())
    }

    @Test func ownerAndParticipantEachResolveTheirDatabaseOnce() async throws {
        let store = try store()
        defer { store.close() }
        let owner = store.client(user: "_own")
        let guest = store.client(user: "_gst")
        let mine = try await owner.setUp(RoomSetup(roomID: room, role: .owner, myUserID: "_own", displayName: "Own",
                                                   roomName: "Marin")).get()
        #expect(mine == RoomBinding(roomID: room, role: .owner, myUserID: "_own"))
        #expect(mine.scope == .private && mine.zone == ZoneID(zoneName: room.rawValue, ownerName: "_own"))
        let theirs = try await guest.setUp(RoomSetup(roomID: room, role: .participant(ownerUserID: "_own"),
                                                     myUserID: "_gst", displayName: "Gst")).get()
        #expect(theirs.scope == .shared && theirs.zone == mine.zone)

        let records = try await guest.fetchAllZoneChanges(theirs.zone, since: nil, scope: .shared).changed
        let decoded = try records.compactMap { try SignalRecord.decode($0) }
        #expect(decoded.contains(.room(Room(roomID: room, name: "Marin"))))
        #expect(decoded.contains(.member(RoomMember(userID: "_own", displayName: "Own"))))
        #expect(decoded.contains(.member(RoomMember(userID: "_gst", displayName: "Gst"))))
        let share = try await owner.fetchShare(zone: mine.zone, scope: .private)
        #expect(share.publicPermission == .readWrite && share.participants["_gst"]?.status == .accepted)
        for (client, scope) in [(owner, DatabaseScope.private), (guest, .shared)] {
            let subscriptions = try await client.listSubscriptions(scope: scope)
            #expect(subscriptions.map(\.subscriptionID) == [RoomSetup.subscriptionID(for: scope)])
        }
    }

    @Test func runningSetupAgainIsHarmlessForBothRoles() async throws {
        let store = try store()
        defer { store.close() }
        let owner = store.client(user: "_own")
        let guest = store.client(user: "_gst")
        let ownerSetup = RoomSetup(roomID: room, role: .owner, myUserID: "_own", displayName: "Own")
        let guestSetup = RoomSetup(roomID: room, role: .participant(ownerUserID: "_own"), myUserID: "_gst",
                                   displayName: "Gst")
        for _ in 0..<2 {
            #expect((try? await owner.setUp(ownerSetup).get()) != nil)
            #expect((try? await guest.setUp(guestSetup).get()) != nil)
        }
        // The one accept function, called again by another path: still a no-op.
        let share = try await guest.acceptShare(zone: room.zoneID(owner: "_own"))
        #expect(share.participants.count == 1)
        let records = try await owner.fetchAllZoneChanges(room.zoneID(), since: nil, scope: .private).changed
        #expect(records.count == 3)
    }

    @Test func aParticipantWithoutAShareFails() async throws {
        let store = try store()
        defer { store.close() }
        let result = await store.client(user: "_gst").setUp(RoomSetup(
            roomID: room, role: .participant(ownerUserID: "_own"), myUserID: "_gst", displayName: "Gst"))
        guard case .failure(let error) = result else {
            Issue.record("joined a room that does not exist")
            return
        }
        #expect(error.code == .zoneNotFound)
    }

    @Test func setupStepsAreTheSpecsOnes() {
        var owner = RoomSetup(roomID: room, role: .owner, myUserID: "_own", displayName: "Own")
        guard case .store(let first) = owner.outputs(after: .start, now: .zero).first,
              case .createZone = first.operation else {
            Issue.record("the owner does not start by creating the zone")
            return
        }
        #expect(first.scope == .private)
        var guest = RoomSetup(roomID: room, role: .participant(ownerUserID: "_own"), myUserID: "_gst", displayName: "G")
        guard case .store(let accept) = guest.outputs(after: .start, now: .zero).first,
              case .acceptShare(let zone) = accept.operation else {
            Issue.record("the participant does not start by accepting")
            return
        }
        #expect(zone.ownerName == "_own")
        let refused = StoreError(.permissionFailure, "no")
        #expect(guest.outputs(after: .outcome(.failed(refused)), now: .zero) == [.failed(refused)])
    }

    /// The share comes right after the zone (participants wait for it), then the records and the
    /// subscription together: answered in either order, the setup is ready once both are.
    @Test func theRecordsAndTheSubscriptionGoTogetherAfterTheShare() throws {
        var owner = RoomSetup(roomID: room, role: .owner, myUserID: "_own", displayName: "Own")
        _ = owner.outputs(after: .start, now: .zero)
        let zone = room.zoneID(owner: "_own")
        let share = owner.outputs(after: .outcome(.zones([.saved(zone)])), now: .zero)
        guard case .store(let request)? = share.first, case .createShare = request.operation, share.count == 1 else {
            Issue.record("no share after the zone: \(share)")
            return
        }
        let last = owner.outputs(after: .outcome(.failed(StoreError(.alreadyExists, "shared"))), now: .zero)
        let operations = last.compactMap { action -> StoreRequest.Operation? in
            if case .store(let request) = action { return request.operation }
            return nil
        }
        guard operations.count == 2, case .modifyRecords(let records) = operations[0],
              case .saveSubscription = operations[1] else {
            Issue.record("not the records and the subscription together: \(last)")
            return
        }
        #expect(records.operations.count == 2 && !records.atomic)
        let subscribed = StoreOutcome.subscriptions([.saved(Subscription(
            subscriptionID: RoomSetup.subscriptionID(for: .private), kind: .database))])
        #expect(owner.outputs(after: .outcome(subscribed), now: .zero).isEmpty)
        let saved = StoreOutcome.modified(ModifyRecordsResult(results: records.operations.compactMap {
            $0.record.map { .saved($0) }
        }))
        #expect(owner.outputs(after: .outcome(saved), now: .zero)
                == [.ready(RoomBinding(roomID: room, role: .owner, myUserID: "_own"))])
        #expect(owner.outputs(after: .outcome(saved), now: .zero).isEmpty, "nothing after ready")
    }
}
