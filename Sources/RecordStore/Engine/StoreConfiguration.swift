/// The store's limits and policies. CloudKit publishes some of these numbers (CloudKit Web Services
/// Reference, "Data Size Limits",
/// developer.apple.com/library/archive/…/CloudKitWebServicesReference/PropertyMetrics.html);
/// the rest are *configurable* defaults, documented as such in docs/CLOUDKIT.md and docs/STORE.md.
public struct StoreConfiguration: Sendable, Hashable {
    /// Operations per `records/modify` request, records per lookup, zones per `zones/modify`
    /// (Data Size Limits: "Maximum number of operations in a request: 200").
    public var maxItemsPerRequest = 200
    /// Bytes of record data per request (the CloudKit framework's guidance for `limitExceeded`:
    /// 2 MB; the Web Services page names no figure). *Configurable.*
    public var maxRequestBytes = 2 * 1024 * 1024
    /// Bytes of field data per record, assets' files not counted (Data Size Limits: 1 MB).
    public var maxRecordBytes = 1024 * 1024
    /// The most records a change-feed page returns, whatever `resultsLimit` asks (Data Size
    /// Limits: "Maximum number of records in a response: 200"; CloudKit may return fewer).
    public var maxResultsPerPage = 200
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
