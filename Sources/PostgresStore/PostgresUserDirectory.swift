#if PostgreSQL
import Foundation
import RecordStore
import StoreServer
import Synchronization

/// Users and their bearer tokens in the `zonertc_users` table, shared by every daemon on the
/// database. A name is taken once: registering it again is `EXISTS`, never its token.
public final class PostgresUserDirectory: UserDirectory {
    let store: PostgresStore
    /// Tokens never change once issued, so one found stays valid: no round trip per request.
    private let known = Mutex<[String: String]>([:])

    public init(store: PostgresStore) { self.store = store }

    public func register(_ name: String) async throws -> String {
        if let problem = UserRegistry.nameProblem(name) {
            throw UserRegistry.RegistryError(kind: .invalidName, description: problem)
        }
        let token = SecretToken.make()
        // Not retried on a new connection: a lost answer may hide a committed insert.
        let inserted = try await store.onReader(idempotent: false) { conn in
            try conn.query("INSERT INTO zonertc_users (name, token) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING "
                           + "RETURNING name", [.text(name), .text(token)]).count
        }
        guard inserted == 1 else {
            throw UserRegistry.RegistryError(kind: .exists, description: "the user '\(name)' already exists")
        }
        known.withLock { $0[token] = name }
        return token
    }

    public func user(forToken token: String) async -> String? {
        if let user = known.withLock({ $0[token] }) { return user }
        guard token.utf8.count <= 256 else { return nil }
        let found = try? await store.onReader { conn in
            let rows = try conn.query("SELECT name FROM zonertc_users WHERE token = $1", [.text(token)])
            return rows.count == 1 ? rows.text(0, 0) : nil
        }
        guard let user = found ?? nil else { return nil }
        known.withLock { $0[token] = user }
        return user
    }

    /// Every user's name.
    public func userNames() async throws -> [String] {
        try await store.onReader { conn in
            let rows = try conn.query("SELECT name FROM zonertc_users ORDER BY name")
            return (0..<rows.count).compactMap { rows.text($0, 0) }
        }
    }
}
#endif
