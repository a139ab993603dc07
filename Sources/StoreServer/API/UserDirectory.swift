/// Where the daemon's users and their bearer tokens live: `users.log` in the data directory
/// (`UserRegistry`) or a table of the shared database (the PostgreSQL backend).
public protocol UserDirectory: Sendable {
    /// Creates a new user and returns its token — only ever once: an existing name throws
    /// `UserRegistry.RegistryError` of kind `.exists`, and its token is never handed out again.
    func register(_ name: String) async throws -> String
    /// The user a bearer token belongs to, if any.
    func user(forToken token: String) async -> String?
}

extension UserRegistry: UserDirectory {}
