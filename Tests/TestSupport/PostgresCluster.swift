import Foundation
import Glibc

/// A throwaway PostgreSQL cluster for the tests: `initdb` into a temporary directory, the server
/// listening only on a Unix socket there (`listen_addresses=''`), run as the `postgres` user when
/// the tests run as root (the server refuses root). One per test process, started on first use
/// and stopped by its PID when the process exits.
///
/// Without `ZONERTC_CI=1` tests that need it are skipped when PostgreSQL is not installed; with it
/// they fail (`.ci/run` installs `postgresql`).
public final class PostgresCluster: @unchecked Sendable {
    public let directory: String
    public var socketDirectory: String { directory }
    public let binaries: String
    private let lock = NSLock()
    private var server: ProcessWatch?

    /// Where PostgreSQL's server programs are (Debian: /usr/lib/postgresql/<version>/bin), or nil.
    public static var binaries: String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for v in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(v)/bin/initdb") {
            return "\(root)/\(v)/bin"
        }
        return ExternalProgram.path("initdb").map { ($0 as NSString).deletingLastPathComponent }
    }

    /// Whether tests needing PostgreSQL should run: it is installed, or this is CI (where they fail without it).
    public static var runnable: Bool { ExternalProgram.underCI || binaries != nil }

    nonisolated(unsafe) private static var sharedCluster: PostgresCluster?
    private static let sharedLock = NSLock()

    /// The test process's cluster, started on first use.
    public static func shared() throws -> PostgresCluster {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let c = sharedCluster { return c }
        let c = try PostgresCluster()
        sharedCluster = c
        atexit { PostgresCluster.sharedCluster?.destroy() }
        return c
    }

    /// The command prefix that runs a server program as `postgres` when we are root.
    private var asOwner: [String] {
        geteuid() == 0 ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] : []
    }

    /// A cluster of the caller's own (for tests that stop and restart the server); `destroy()` it.
    public static func makePrivate() throws -> PostgresCluster { try PostgresCluster() }

    /// Stops the server and removes the cluster's directory.
    public func destroy() {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private init() throws {
        guard let bin = PostgresCluster.binaries else {
            throw SpawnFailure("PostgreSQL is not installed (apt-get install postgresql); .ci/run installs it")
        }
        binaries = bin
        var template = Array("/tmp/zonertc-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SpawnFailure("mkdtemp: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        chmod(directory, 0o755)
        if geteuid() == 0, let pw = getpwnam("postgres") { chown(directory, pw.pointee.pw_uid, pw.pointee.pw_gid) }
        let initdb = try spawnWatched(asOwner + ["\(bin)/initdb", "-D", "\(directory)/data", "-A", "trust",
                                                 "-U", "postgres", "-E", "UTF8", "--no-sync"])
        guard initdb.wait(within: .seconds(120)) == 0 else {
            throw SpawnFailure("initdb failed: \(initdb.stderr)\(initdb.stdout)")
        }
        try start()
    }

    /// Starts the server on the cluster's directory and waits until it accepts connections.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard server == nil else { return }
        let child = try spawnWatched(asOwner + ["\(binaries)/postgres", "-D", "\(directory)/data", "-k", directory,
                                                "-c", "listen_addresses=", "-c", "max_connections=400",
                                                "-c", "shared_buffers=32MB"])
        let ready = child.wait(within: .seconds(60)) { $0.stderr.contains("ready to accept connections") }
        guard ready else {
            Glibc.kill(child.pid, SIGKILL)
            _ = child.wait(within: .seconds(10))
            throw SpawnFailure("postgres did not start: \(child.stderr)")
        }
        server = child
    }

    /// Stops the server by its PID (fast shutdown: sessions are ended, nothing committed is lost).
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let child = server else { return }
        Glibc.kill(child.pid, SIGINT)
        if child.wait(within: .seconds(30)) == nil {
            Glibc.kill(child.pid, SIGKILL)
            _ = child.wait(within: .seconds(10))
        }
        server = nil
    }

    /// Crashes the server: SIGQUIT to the postmaster by its PID is `pg_ctl stop -m immediate`
    /// (no checkpoint, no flush of WAL written but not yet flushed); `start()` then recovers.
    public func crash() {
        lock.lock()
        defer { lock.unlock() }
        guard let child = server else { return }
        Glibc.kill(child.pid, SIGQUIT)
        if child.wait(within: .seconds(30)) == nil {
            Glibc.kill(child.pid, SIGKILL)
            _ = child.wait(within: .seconds(10))
        }
        server = nil
    }

    /// A libpq URI for `database`; with `schema`, every session works in that schema.
    public func url(database: String = "postgres", schema: String? = nil) -> String {
        var url = "postgresql:///\(database)?host=\(directory)&user=postgres"
        if let schema { url += "&options=-c%20search_path%3D\(schema)" }
        return url
    }

    /// Runs SQL with psql; returns its output (unaligned, tuples only), throwing what psql said on failure.
    @discardableResult
    public func sql(_ statement: String, database: String = "postgres") throws -> String {
        let psql = try spawnWatched(["\(binaries)/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                     "-h", directory, "-U", "postgres", "-d", database, "-c", statement])
        guard psql.wait(within: .seconds(60)) == 0 else { throw SpawnFailure("psql: \(psql.stderr)") }
        return psql.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Asks `statement` again (each time a psql run, no sleep) until it answers `expected`, at
    /// most `attempts` times; whether it did. For waiting on another session's lock or commit.
    public func answers(_ statement: String, _ expected: String, attempts: Int = 500) throws -> Bool {
        for _ in 0..<attempts where try sql(statement) == expected { return true }
        return false
    }

    private var created = 0

    /// A name no earlier call in this process returned.
    private func freshName(_ prefix: String) -> String {
        lock.lock()
        defer { lock.unlock() }
        created += 1
        return "\(prefix)\(getpid())_\(created)"
    }

    /// A new, empty schema for one test's store.
    public func freshSchema() throws -> String {
        let name = freshName("t")
        try sql("CREATE SCHEMA \(name)")
        return name
    }

    /// A new, empty database (for tests of whole daemons).
    public func freshDatabase() throws -> String {
        let name = freshName("zonertc_")
        try sql("CREATE DATABASE \(name)")
        return name
    }
}
