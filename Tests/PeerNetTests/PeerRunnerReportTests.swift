// What the real driver did without is said, not swallowed: a store that offers no push
// notifications leaves the call polling, and the runner's report (the summary's `pushUnavailable`)
// says why. One peer on a real loopback socket and an in-memory store; bounded by the connect timeout.
import Net
import Peer
import PeerNet
import RecordStore
import StoreTestSupport
import Signaling
import Testing
import ZoneCore

/// The embedded store's client, minus push: `notifications()` fails as a store without a push
/// channel would.
private struct PushUnavailable: Error, CustomStringConvertible {
    var description: String { "push is switched off here" }
}

@Suite struct PeerRunnerReportTests {
    /// Alice waits for a Bob who never comes: the call fails at its connect timeout, closes, and the
    /// runner stops on `closed` (not on the goodbye's timeout) with the missing push in its report.
    @Test func aStoreWithoutPushIsReportedAndTheRunnerStopsWhenTheCallIsClosed() async throws {
        let store = try EmbeddedStore(options: .inMemoryForTests)
        defer { store.close() }
        let embedded = store.client(user: "alice", deviceID: "alice-device")
        let client = RoutedStoreClient(writes: embedded, reads: embedded, push: { throw PushUnavailable() })
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

    /// The kernel refuses a datagram to the broadcast address from a socket without SO_BROADCAST:
    /// `send` says how many it took, and the rest are what the runner counts as `socketRefused`
    /// (see PeerCallDropsTests for that count in the summary's text and JSON).
    @Test func datagramsTheKernelRefusesAreNotCountedAsSent() throws {
        let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        let broadcast = Endpoint(address: .v4(0xFFFF_FFFF), port: 9)
        let batch: [(payload: [UInt8], to: Endpoint)] = [([1, 2, 3], broadcast), ([4, 5], broadcast)]
        let sent = socket.send(batch)
        #expect(sent < batch.count)
        #expect(!socket.send([6], to: broadcast))
    }
}
