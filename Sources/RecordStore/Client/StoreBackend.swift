import ZoneCore

/// Whether an operation may change the store: backends that share their state with other
/// processes serialize writes among them and serve reads without that lock.
public enum StoreAccess: Sendable {
    case read, write
}

/// What runs the engine's operations durably: the embedded engine with its journal
/// (`EmbeddedStore`), or the engine kept in step with a shared database (the PostgreSQL backend).
/// The daemon and `EmbeddedStoreClient` see only this.
public protocol StoreBackend: Sendable {
    /// Where this process's push streams listen; every change that should notify reaches it.
    var push: PushHub { get }
    var clock: any InstantSource { get }

    /// Runs one request as `user` on `deviceID`; returns once its effects (and everything it saw) are durable.
    func perform<T: Sendable>(
        user: String, deviceID: String?, access: StoreAccess,
        _ operation: @escaping @Sendable (inout StoreEngine, RequestContext) throws(StoreError) -> T
    ) async throws -> T

    /// A summary of what the store holds, for `zonertc store inspect`.
    func inspection() async throws -> StoreInspection

    /// Stops the push hub and lets go of files and connections.
    func close()
}

extension StoreBackend {
    /// A client acting as `user` on `deviceID`, taking asset receipts of `assets`.
    public func client(user: String, deviceID: String = "device-1",
                       assets: (any AssetStorage)? = nil) -> EmbeddedStoreClient {
        EmbeddedStoreClient(store: self, userRecordName: user, deviceID: deviceID, assets: assets)
    }
}
