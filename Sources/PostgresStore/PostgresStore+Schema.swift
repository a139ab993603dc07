#if PostgreSQL

extension PostgresStore {
    /// Creates schema `name` in the database at `url` (if missing) and returns a URL whose sessions
    /// work in it: several independent stores in one database (benchmarks, tests).
    public static func schemaURL(_ url: String, schema name: String) async throws -> String {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
        guard !name.isEmpty, allowed else {
            throw PostgresError(kind: .statement, message: "a schema name here is lower-case letters, digits and _")
        }
        try await onOwnThread("zonertc-pg-schema") {
            let c = try PostgresConnection(url: url)
            defer { c.close() }
            try c.execute("CREATE SCHEMA IF NOT EXISTS \(name)")
        }
        let separator = url.contains("?") ? "&" : "?"
        return url + separator + "options=-c%20search_path%3D\(name)"
    }
}
#endif
