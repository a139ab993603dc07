#if PostgreSQL
import RecordStore

extension PostgresUserDirectory {
    /// Adds `tokens` to the container's API tokens in `zonertc_api_tokens` and returns them all, so
    /// every daemon on the database accepts a token any of them was started with, and a restart
    /// without `--api-token` keeps accepting them.
    public func rememberAPITokens(_ tokens: [String]) async throws -> [String] {
        try await store.onReader(idempotent: true) { conn in
            for token in tokens {
                try conn.query("INSERT INTO zonertc_api_tokens (token) VALUES ($1) ON CONFLICT (token) DO NOTHING",
                               [.text(token)])
            }
            let rows = try conn.query("SELECT token FROM zonertc_api_tokens ORDER BY declared_at, token")
            return (0..<rows.count).compactMap { rows.text($0, 0) }
        }
    }
}
#endif
