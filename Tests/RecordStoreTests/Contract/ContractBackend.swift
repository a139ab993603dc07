import RecordStore
import ZoneCore

/// The stores the contract suite runs against. The remote client joins this list with the
/// store daemon; every contract test then runs against both.
enum ContractBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case embedded

    var description: String { rawValue }

    /// A fresh, empty store on a manual clock.
    func makeStore(configuration: StoreConfiguration = .default,
                   clock: ManualClock = ManualClock()) async throws -> ContractStore {
        switch self {
        case .embedded:
            var options = EmbeddedStore.Options.inMemoryForTests
            options.configuration = configuration
            let store = try EmbeddedStore(options: options, clock: clock)
            return ContractStore(
                clock: clock,
                makeClient: { user, device in store.client(user: user, deviceID: device) },
                pump: { store.pumpPush() },
                shutdown: { store.close() })
        }
    }
}

/// A store under test: clients for any user and device, its clock, and its push pump.
struct ContractStore: Sendable {
    let clock: ManualClock
    let makeClient: @Sendable (String, String) -> any StoreClient
    let pump: @Sendable () async -> Int
    let shutdown: @Sendable () async -> Void

    func client(_ user: String, device: String = "device-1") -> any StoreClient { makeClient(user, device) }

    /// Moves the clock past every push latency and delivers what is due.
    @discardableResult
    func deliverPushes(after: Duration = .milliseconds(5)) async -> Int {
        clock.advance(by: after)
        return await pump()
    }
}

/// Builds a record in a zone.
func record(_ name: String, type: String = "Note", in zone: ZoneID = ZoneID(zoneName: "room_a"),
            _ fields: [String: FieldValue] = [:]) -> Record {
    Record(recordType: type, id: RecordID(recordName: name, zoneID: zone), fields: fields)
}

/// Runs `body` and returns the StoreError it threw, or nil.
func storeError(_ body: () async throws -> Void) async -> StoreError? {
    do { try await body(); return nil } catch let e as StoreError { return e } catch { return StoreError(.internalError, "\(error)") }
}
