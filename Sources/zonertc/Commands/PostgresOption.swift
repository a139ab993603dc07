import RecordStore
import StoreServer
#if PostgreSQL
import PostgresStore
#endif

/// The group-commit flags as parsed, in every build (`GroupCommit` exists only with the trait).
struct GroupCommitSetting {
    var delay: Duration = .microseconds(800)
    var size = 8

    var description: String {
        delay == .zero ? "off" : "\(Int(delay / .microseconds(1)))us up to \(size) writes"
    }
}

/// `--postgres URL` of the store commands: the PostgreSQL backend, or a clear refusal in a build
/// without the `PostgreSQL` trait.
enum PostgresOption {
    static let help = "a PostgreSQL database (libpq URI, e.g. postgresql:///zonertc?host=/run/postgresql)"

    static func unavailable(_ spec: CommandSpec) -> UsageError {
        UsageError(message: "--postgres: this zonertc was built without PostgreSQL; "
                   + "build it with `swift build --traits PostgreSQL`", command: spec)
    }

    /// `--group-commit-delay` and `--group-commit-size`: how a daemon groups writes into batches.
    static func groupCommit(_ args: ParsedCommand, spec: CommandSpec) throws -> GroupCommitSetting {
        let text = args.string("--group-commit-delay") ?? "800us"
        let delay: Duration
        do { delay = text == "0" ? .zero : try PushProfile.parseDuration(text) } catch {
            throw UsageError(message: "--group-commit-delay: \(error)", command: spec)
        }
        guard delay <= .seconds(1) else {
            throw UsageError(message: "--group-commit-delay: at most 1s (every write could wait that long)",
                             command: spec)
        }
        let size = try args.int("--group-commit-size", in: 1...65_536) ?? 8
        return GroupCommitSetting(delay: delay, size: size)
    }

    /// Opens the store on `url` (schema created or migrated) and its user table.
    static func open(url: String, configuration: StoreConfiguration, pushProfile: PushProfile, pushSeed: UInt64,
                     groupCommit: GroupCommitSetting = GroupCommitSetting(),
                     spec: CommandSpec) async throws -> (any StoreBackend, any UserDirectory) {
        #if PostgreSQL
        var options = PostgresStore.Options(url: url)
        options.groupCommit = GroupCommit(delay: groupCommit.delay, size: groupCommit.size)
        options.configuration = configuration
        options.pushProfile = pushProfile
        options.pushSeed = pushSeed
        let store = try await PostgresStore.open(options: options)
        return (store, PostgresUserDirectory(store: store))
        #else
        throw unavailable(spec)
        #endif
    }

    /// The database's asset files (`zonertc_assets`), shared by every daemon on it.
    static func assets(of store: any StoreBackend) -> (any AssetStorage)? {
        #if PostgreSQL
        return (store as? PostgresStore).map { PostgresAssets(store: $0) }
        #else
        return nil
        #endif
    }

    /// Adds `tokens` to the database's API tokens; returns every one declared so far.
    static func rememberAPITokens(_ tokens: [String], users: any UserDirectory,
                                  spec: CommandSpec) async throws -> [String] {
        #if PostgreSQL
        guard let directory = users as? PostgresUserDirectory else { return tokens }
        return try await directory.rememberAPITokens(tokens)
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
