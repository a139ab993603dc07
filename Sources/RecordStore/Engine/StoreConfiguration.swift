/// The store's limits and policies. CloudKit publishes some of these numbers; the rest are
/// *configurable* defaults, documented as such in docs/STORE.md.
public struct StoreConfiguration: Sendable, Hashable {
    /// Items (saves + deletes) per `modifyRecords` request (CloudKit: 400).
    public var maxItemsPerRequest = 400
    /// Bytes of record data per request (CloudKit: 2 MB).
    public var maxRequestBytes = 2 * 1024 * 1024
    /// Bytes of field data per record (CloudKit: 1 MB).
    public var maxRecordBytes = 1024 * 1024
    /// The most records a change-feed page returns, whatever `resultsLimit` asks
    /// (CloudKit may return fewer than asked). *Configurable.*
    public var maxResultsPerPage = 400
    /// How long change tokens stay usable. Apple publishes no figure. *Configurable.*
    public var tokenRetention: Duration = .seconds(7 * 24 * 3600)
    /// Devices a user may register for push. Each registered device gets its own copy of every
    /// notification, so an unbounded count would let one user multiply the push work. *Configurable.*
    public var maxDevicesPerUser = 64
    /// Request throttling and error injection; off by default.
    public var throttle: ThrottlePolicy = .off

    public init() {}

    /// The defaults: CloudKit's published limits, throttling off.
    public static let `default` = StoreConfiguration()
}
