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

    @Test("users added before the first start: the data directory is made, and the daemon then serves them")
    func usersBeforeTheFirstStart() async throws {
        let root = NSTemporaryDirectory() + "zonertc-users-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = root + "/new/store"
        let added = try ZonertcProcess.run(["store", "user", "add", "alice", "--data", dir])
        #expect(added.status == 0, "\(added.stderr)")
        let token = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 64)
        let daemon = try DaemonProcess(arguments: ["--data", dir, "--no-register"])
        let alice = RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token),
                                      userRecordName: "alice", deviceID: "d")
        #expect(try await alice.listZones(scope: .private).map(\.zoneName) == ["_defaultZone"])
        daemon.kill(SIGTERM)
        // A path that cannot be a directory: a clear error naming it, exit 1.
        let file = root + "/plain"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let refused = try ZonertcProcess.run(["store", "user", "add", "bob", "--data", file + "/store"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot create the data directory \(file)/store"), "\(refused.stderr)")
    }
}
