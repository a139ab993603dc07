import RecordStore
import StoreServer
#if PostgreSQL
import PostgresStore
#endif

/// `--postgres URL` of the store commands: the PostgreSQL backend, or a clear refusal in a build
/// without the `PostgreSQL` trait.
enum PostgresOption {
    static let help = "a PostgreSQL database (libpq URI, e.g. postgresql:///zonertc?host=/run/postgresql)"

    static func unavailable(_ spec: CommandSpec) -> UsageError {
        UsageError(message: "--postgres: this zonertc was built without PostgreSQL; "
                   + "build it with `swift build --traits PostgreSQL`", command: spec)
    }

    /// Opens the store on `url` (schema created or migrated) and its user table.
    static func open(url: String, configuration: StoreConfiguration, pushProfile: PushProfile, pushSeed: UInt64,
                     spec: CommandSpec) async throws -> (any StoreBackend, any UserDirectory) {
        #if PostgreSQL
        var options = PostgresStore.Options(url: url)
        options.configuration = configuration
        options.pushProfile = pushProfile
        options.pushSeed = pushSeed
        let store = try await PostgresStore.open(options: options)
        return (store, PostgresUserDirectory(store: store))
        #else
        throw unavailable(spec)
        #endif
    }

    /// What the database holds, read without writing.
    static func inspect(url: String, spec: CommandSpec) async throws -> StoreInspection {
        #if PostgreSQL
        var options = PostgresStore.Options(url: url)
        options.readOnly = true
        options.automaticPush = false
        options.readers = 1
        let store = try await PostgresStore.open(options: options)
        defer { store.close() }
        return try await store.inspection()
        #else
        throw unavailable(spec)
        #endif
    }

    /// Creates a user in the database's user table; returns its token.
    static func addUser(_ name: String, url: String, spec: CommandSpec) async throws -> String {
        #if PostgreSQL
        var options = PostgresStore.Options(url: url)
        options.automaticPush = false
        options.readers = 1
        let store = try await PostgresStore.open(options: options)
        defer { store.close() }
        return try await PostgresUserDirectory(store: store).register(name)
        #else
        throw unavailable(spec)
        #endif
    }
}
