// The composite signaling machine passes on its parts' actions: the negotiator's of an event, then
// those of the sync paths the event reaches, in order; an event's actions are its own (the queue
// the negotiator is stepped into is kept from event to event, and must carry nothing over).
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

@Suite("Call signaling")
struct CallSignalingTests {
    private static let t0 = Instant.seconds(1_700_000_000)

    @Test func eachEventGivesItsOwnActionsInOrder() throws {
        let room = try RoomID("room_order001")
        let binding = RoomBinding(roomID: room, role: .owner, myUserID: "_a11ce")
        let configuration = SignalingConfiguration.standard()
        var signaling = try CallSignaling(configuration: configuration, binding: binding, myUserID: "_a11ce",
                                          remoteUserID: "_b0b", seed: 1)
        let session = RecordID(recordName: signaling.negotiator.names.session, zoneID: binding.zone)

        // The negotiator's lookup and report (which the path hears: a call is negotiating), then the
        // path's catch-up fetch.
        #expect(signaling.outputs(after: .start, now: Self.t0) == [
            .store(StoreRequest(scope: binding.scope, .lookupRecords([session])),
                   origin: .negotiator(.lookup([session]))),
            .report(.preparing),
            .store(StoreRequest(scope: binding.scope, .fetchZoneChanges(
                binding.zone, since: nil, resultsLimit: configuration.timing.resultsLimit)), origin: .path(0)),
        ])
        // Nothing of the first event comes again with the next.
        #expect(signaling.outputs(after: .hangUp, now: Self.t0 + .seconds(1)) == [.ice(.close), .report(.ended)])
        #expect(signaling.outputs(after: .hangUp, now: Self.t0 + .seconds(2)).isEmpty)
    }
}
