// What the real driver did without is said, not swallowed: a store that offers no push
// notifications leaves the call polling, and the runner's report (the summary's `pushUnavailable`)
// says why. One peer on a real loopback socket and an in-memory store; bounded by the connect timeout.
import Net
import Peer
import PeerNet
import RecordStore
import Signaling
import Testing
import ZoneCore

/// The embedded store's client, minus push: `notifications()` fails as a store without a push
/// channel would.
private struct NoPushClient: StoreClient {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "push is switched off here" }
    }

    let base: EmbeddedStoreClient
    var userRecordName: String { base.userRecordName }
    var deviceID: String { base.deviceID }

    func modifyRecords(_ request: ModifyRecordsRequest, scope: DatabaseScope) async throws -> ModifyRecordsResult {
        try await base.modifyRecords(request, scope: scope)
    }
    func lookupRecords(_ ids: [RecordID], scope: DatabaseScope) async throws -> [LookupResult] {
        try await base.lookupRecords(ids, scope: scope)
    }
    func queryRecords(recordType: String, in zone: ZoneID, filters: [String: FieldValue],
                      scope: DatabaseScope) async throws -> [Record] {
        try await base.queryRecords(recordType: recordType, in: zone, filters: filters, scope: scope)
    }
    func fetchZoneChanges(_ zone: ZoneID, since token: ChangeToken?, resultsLimit: Int?,
                          scope: DatabaseScope) async throws -> ZoneChanges {
        try await base.fetchZoneChanges(zone, since: token, resultsLimit: resultsLimit, scope: scope)
    }
    func fetchDatabaseChanges(since token: ChangeToken?, resultsLimit: Int?,
                              scope: DatabaseScope) async throws -> DatabaseChanges {
        try await base.fetchDatabaseChanges(since: token, resultsLimit: resultsLimit, scope: scope)
    }
    func modifyZones(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope) async throws -> [ZoneResult] {
        try await base.modifyZones(save: save, delete: delete, scope: scope)
    }
    func listZones(scope: DatabaseScope) async throws -> [ZoneID] { try await base.listZones(scope: scope) }
    func modifySubscriptions(save: [Subscription], delete: [String],
                             scope: DatabaseScope) async throws -> [SubscriptionResult] {
        try await base.modifySubscriptions(save: save, delete: delete, scope: scope)
    }
    func listSubscriptions(scope: DatabaseScope) async throws -> [Subscription] {
        try await base.listSubscriptions(scope: scope)
    }
    func createShare(zone: ZoneID, publicPermission: SharePermission,
                     participants: [String: SharePermission]) async throws -> ZoneShare {
        try await base.createShare(zone: zone, publicPermission: publicPermission, participants: participants)
    }
    func updateShare(zone: ZoneID, _ update: ShareUpdate) async throws -> ZoneShare {
        try await base.updateShare(zone: zone, update)
    }
    func deleteShare(zone: ZoneID) async throws { try await base.deleteShare(zone: zone) }
    func acceptShare(zone: ZoneID) async throws -> ZoneShare { try await base.acceptShare(zone: zone) }
    func fetchShare(zone: ZoneID, scope: DatabaseScope) async throws -> ZoneShare {
        try await base.fetchShare(zone: zone, scope: scope)
    }
    func notifications() async throws -> AsyncStream<PushNotification> { throw Unavailable() }
}

@Suite struct PeerRunnerReportTests {
    /// Alice waits for a Bob who never comes: the call fails at its connect timeout, closes, and the
    /// runner stops on `closed` (not on the goodbye's timeout) with the missing push in its report.
    @Test func aStoreWithoutPushIsReportedAndTheRunnerStopsWhenTheCallIsClosed() async throws {
        let store = try EmbeddedStore(options: .inMemoryForTests)
        defer { store.close() }
        let client = NoPushClient(base: store.client(user: "alice", deviceID: "alice-device"))
        let room = try RoomID("room_nopush01")
        let binding = try await client.setUp(RoomSetup(roomID: room, role: .owner, myUserID: "alice",
                                                       displayName: "alice")).get()
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let configuration = PeerCallConfiguration(
            myUserID: "alice", remoteUserID: "bob", signaling: .standard(.hybrid),
            transport: PeerTransportConfiguration(hostAddresses: [socket.localEndpoint]),
            lifetime: CallLifetime(connectTimeout: .milliseconds(300)), seed: 1)
        let call = try PeerCall(configuration: configuration, binding: binding)
        var options = PeerRunner.Options()
        options.goodbyeTimeout = .seconds(20)
        let runner = try PeerRunner(call: call, client: client, sockets: [socket], options: options)

        let outcome = await runner.run()
        guard case .failed(let why) = outcome else {
            Issue.record("the call \(outcome), expected a connect timeout")
            return
        }
        #expect(why.contains("connect"), "\(why)")
        let report = try #require(runner.finalReport)
        #expect(report.pushUnavailable?.contains("push is switched off here") == true, "\(report)")
        #expect(report.goodbyeTimedOut == false)
        #expect(report.unsentDatagrams == 0)
    }
}
