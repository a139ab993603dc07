import Foundation
import Testing
import RecordStore
import ZoneCore

/// Each registered device gets its own copy of every notification: a user's devices are capped.
@Suite("Devices registered for push")
struct DeviceLimitTests {
    @Test("the device past the cap is refused with limitExceeded (BAD_REQUEST); known devices register again")
    func capPerUser() async throws {
        var options = EmbeddedStore.Options.inMemoryForTests
        options.configuration.maxDevicesPerUser = 2
        let store = try EmbeddedStore(options: options)
        defer { store.close() }
        _ = try await store.client(user: "alice", deviceID: "d1").notifications()
        _ = try await store.client(user: "alice", deviceID: "d2").notifications()
        _ = try await store.client(user: "alice", deviceID: "d1").notifications()
        let refused = await #expect(throws: StoreError.self) {
            _ = try await store.client(user: "alice", deviceID: "d3").notifications()
        }
        #expect(refused?.code == .limitExceeded)
        #expect(refused?.message.contains("2 devices") == true)
        // The cap is per user: bob still registers.
        _ = try await store.client(user: "bob", deviceID: "d3").notifications()
    }

    @Test("a device ID longer than 255 bytes is a bad request")
    func longDeviceID() async throws {
        let store = try EmbeddedStore(options: .inMemoryForTests)
        defer { store.close() }
        let refused = await #expect(throws: StoreError.self) {
            _ = try await store.client(user: "alice", deviceID: String(repeating: "d", count: 256)).notifications()
        }
        #expect(refused?.code == .invalidArguments)
    }
}
