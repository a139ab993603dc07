/// A web client's push token (`tokens/create`, `tokens/register`), kept in the store so that it
/// outlives the daemon that made it and every daemon on a shared database knows it.
///
/// CloudKit Web Services Reference, "Creating APNs Tokens (tokens/create)" (CreateTokens.html) and
/// "Registering Tokens (tokens/register)" (RegisterTokens.html). The token itself is a capability
/// (its webcourier URL needs no other credentials), so the store keeps only its SHA-256 digest: the
/// journal, a snapshot or the PostgreSQL log never hold a token anyone could poll with.
public struct WebPushToken: Hashable, Sendable {
    /// The token's SHA-256, 64 lowercase hex digits: how it is looked up.
    public var digest: String
    /// The user whose subscriptions fire to it.
    public var user: String
    /// `development` or `production`: register must name the one create named.
    public var environment: String
    /// The container named in the create request's path, answered in notifications.
    public var container: String
    /// Its place among the user's tokens, oldest first: the oldest is forgotten past the limit.
    public var serial: UInt64
    /// Whether `tokens/register` was called for it.
    public var registered: Bool

    public init(digest: String, user: String, environment: String, container: String, serial: UInt64,
                registered: Bool = false) {
        self.digest = digest
        self.user = user
        self.environment = environment
        self.container = container
        self.serial = serial
        self.registered = registered
    }
}
