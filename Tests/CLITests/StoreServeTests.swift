import Foundation
import RecordStore
import StoreServer
import Testing
import ZoneCore

/// `zonertc store serve` as a process: quick start, users added beside it, clean stop on SIGTERM.
@Suite("zonertc store serve")
struct StoreServeTests {
    @Test("starts well under a second, serves a user added with `store user add`, stops on SIGTERM with exit 0")
    func lifecycle() async throws {
        let dir = NSTemporaryDirectory() + "zonertc-serve-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let watch = Stopwatch()
        let daemon = try DaemonProcess(arguments: ["--data", dir, "--no-register"])
        let startup = watch.elapsed
        #expect(startup < .seconds(1), "took \(startup)")
        let added = try ZonertcProcess.run(["store", "user", "add", "bob", "--data", dir])
        #expect(added.status == 0)
        let token = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 64)
        let again = try ZonertcProcess.run(["store", "user", "add", "bob", "--data", dir])
        #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token)
        let bob = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                    userRecordName: "bob", deviceID: "d")
        #expect(try await bob.listZones(scope: .private).map(\.zoneName) == ["_defaultZone"])
        // Registration is off: the endpoint refuses.
        let refused = await #expect(throws: StoreError.self) {
            _ = try await RemoteStoreClient.register(userName: "eve", at: daemon.endpoint)
        }
        #expect(refused?.code == .permissionFailure)
        daemon.kill(SIGTERM)
        #expect(daemon.process.terminationStatus == 0)
    }
}
