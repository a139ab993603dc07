// A store served by a daemon on loopback for a test: the two stop together when the test lets go.
import RecordStore
import StoreServer

/// A daemon and the store it serves, stopped and closed when the last reference goes away.
public final class ServedStore: Sendable {
    public let daemon: StoreDaemon
    public let store: any StoreBackend

    public init(daemon: StoreDaemon, store: any StoreBackend) {
        self.daemon = daemon
        self.store = store
    }

    deinit {
        daemon.stop()
        store.close()
    }
}
