import Foundation
import RecordStore
import Synchronization
import ZoneCore

/// The daemon's users and their bearer tokens: in `users.log` in the data directory (`UserLog`), or
/// only in memory.
///
/// Registering appends one entry and waits for a sync shared with every registration made meanwhile
/// (`BatchedSync`), off the caller's thread: a registration costs the same however many users exist,
/// and a daemon registering thousands at once makes a few syncs, not thousands. A token is handed out
/// once the entry holding it is durable. Users another process added (`zonertc store user add`) are
/// read from the log's tail when a token is not known yet.
///
/// Data directories of earlier versions kept every user in `users.json`, rewritten whole on each
/// registration; opening such a directory moves those users into the log (and removes the file).
public final class UserRegistry: Sendable {
    public struct RegistryError: Error, CustomStringConvertible, Sendable {
        /// What went wrong, for a caller to switch on.
        public enum Kind: Sendable { case invalidName, exists, storage }
        public var kind: Kind = .storage
        public var description: String

        public init(kind: Kind = .storage, description: String) {
            self.kind = kind
            self.description = description
        }
    }

    private struct State {
        var tokens: [String: String] = [:]  // token → user
        var users: [String: String] = [:]   // user → token

        mutating func learn(_ entries: [UserLog.Entry]) {
            for e in entries where users[e.name] == nil && tokens[e.token] == nil {
                users[e.name] = e.token
                tokens[e.token] = e.name
            }
        }
    }

    /// The file and how many entries this process appended to it (what `BatchedSync` counts);
    /// taken before `state`, never the other way round.
    private struct Disk {
        var log: UserLog
        var appended: UInt64 = 0
    }

    private let state = Mutex(State())
    /// nil in memory.
    private let disk: Mutex<Disk?>
    private let sync: BatchedSync?
    /// What earlier versions kept in the data directory.
    static let legacyFileName = "users.json"

    /// Opens the users of `directory` (nil: in memory only), moving an earlier version's
    /// `users.json` into the log.
    public init(directory: String?) throws {
        guard let directory else {
            disk = Mutex(nil)
            sync = nil
            return
        }
        let log: UserLog
        do throws(UserLog.LogError) { log = try UserLog(directory: directory) } catch { throw RegistryError(description: error.description) }
        let legacyPath = "\(directory)/\(Self.legacyFileName)"
        let (known, moved): (State, Int)
        do throws(UserLog.LogError) {
            (known, moved) = try log.locked(exclusive: true) { () throws(UserLog.LogError) in
                var s = State()
                s.learn(try log.readNew())
                guard let data = FileManager.default.contents(atPath: legacyPath) else { return (s, 0) }
                guard let o = try? JSONSerialization.jsonObject(with: data) as? [String: String] else {
                    throw UserLog.LogError(description: "\(legacyPath) is not a JSON object of user names to tokens")
                }
                // Sorted, so the log's order does not depend on the dictionary's.
                var moved: [UserLog.Entry] = []
                for (name, token) in o.sorted(by: { $0.key < $1.key }) where s.users[name] == nil
                    && s.tokens[token] == nil && !token.isEmpty && UserRegistry.nameProblem(name) == nil {
                    moved.append(UserLog.Entry(name: name, token: token))
                    s.learn([moved.last!])
                }
                try log.append(moved)
                try log.sync()
                // Only once every user it held is durable in the log.
                guard unlink(legacyPath) == 0 || errno == ENOENT else {
                    throw UserLog.LogError(description: "cannot remove \(legacyPath) after moving its users into "
                                           + "\(UserLog.fileName): \(String(cString: strerror(errno)))")
                }
                let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if dirFD >= 0 { fsync(dirFD); close(dirFD) }
                return (s, moved.count)
            }
        } catch {
            throw RegistryError(description: error.description)
        }
        if moved > 0 {
            Logger(component: "store-users").info("moved the users of \(Self.legacyFileName) into \(UserLog.fileName)",
                                                  ["users": "\(moved)"])
        }
        state.withLock { $0 = known }
        sync = BatchedSync(fd: log.fd, what: log.path)
        disk = Mutex(Disk(log: log))
    }

    /// Whether a user name is acceptable (what CloudKit user record names look like, and more).
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > 255 { return "a user name has 1 to 255 characters" }
        if ReservedNames.contains(name) { return "the user name '\(name)' is the store's own" }
        let ok = name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E }
        return ok ? nil : "a user name may hold letters, digits, '_', '-' and '.'"
    }

    /// Creates a user (or returns the existing user's token), durably before it returns. This is the
    /// operator's path (`zonertc store user add`), who can read the data directory anyway; remote
    /// callers go through `register`, which never returns an existing user's token.
    public func add(_ name: String) throws -> String {
        let (token, _) = try create(name)
        // Synced even when the name existed: its entry may be another registration's, not durable yet.
        do throws(UserLog.LogError) { try disk.withLock { d throws(UserLog.LogError) in try d?.log.sync() } } catch {
            throw RegistryError(description: error.description)
        }
        return token
    }

    /// Creates a new user and returns its token once it is durable; an existing name throws `.exists`
    /// and reveals nothing.
    public func register(_ name: String) async throws -> String {
        let (token, appended) = try create(name)
        guard let appended else {
            throw RegistryError(kind: .exists, description: "the user '\(name)' already exists")
        }
        if let sync, appended > 0 {
            do { try await sync.durable(through: appended) } catch {
                throw RegistryError(description: "\(error)")
            }
        }
        return token
    }

    /// The user's token, and when it was made now the number of its append to the log (0 in memory);
    /// nil when the name was taken already. The log is read and appended to under its exclusive lock,
    /// so another process cannot take the name meanwhile.
    private func create(_ name: String) throws -> (token: String, appended: UInt64?) {
        if let problem = UserRegistry.nameProblem(name) {
            throw RegistryError(kind: .invalidName, description: problem)
        }
        do throws(UserLog.LogError) {
            return try disk.withLock { d throws(UserLog.LogError) -> (token: String, appended: UInt64?) in
                guard let log = d?.log else { return state.withLock { s in Self.take(name, in: &s) } }
                let (token, created) = try log.locked(exclusive: true) { () throws(UserLog.LogError) in
                    let others = try log.readNew()
                    let (token, created) = state.withLock { s in
                        s.learn(others)
                        if let existing = s.users[name] { return (existing, false) }
                        return (Self.newToken(avoiding: s.tokens), true)
                    }
                    guard created else { return (token, false) }
                    try log.append([UserLog.Entry(name: name, token: token)])
                    state.withLock { s in s.learn([UserLog.Entry(name: name, token: token)]) }
                    return (token, true)
                }
                guard created else { return (token, nil) }
                d!.appended += 1
                return (token, d!.appended)
            }
        } catch {
            throw RegistryError(description: error.description)
        }
    }

    /// In memory: the existing token, or a new one.
    private static func take(_ name: String, in s: inout State) -> (token: String, appended: UInt64?) {
        if let existing = s.users[name] { return (existing, nil) }
        let token = newToken(avoiding: s.tokens)
        s.learn([UserLog.Entry(name: name, token: token)])
        return (token, 0)
    }

    /// A new secret token, never one already issued.
    private static func newToken(avoiding issued: [String: String]) -> String {
        while true {
            let token = SecretToken.make()
            if issued[token] == nil { return token }
        }
    }

    /// The user a bearer token belongs to. An unknown token costs one `fstat` of the log (to see
    /// whether another process added users), and a read of what it added.
    public func user(forToken token: String) -> String? {
        if let user = state.withLock({ $0.tokens[token] }) { return user }
        disk.withLock { d in
            guard let log = d?.log, log.mayHaveGrown else { return }
            let added = try? log.locked(exclusive: false) { () throws(UserLog.LogError) in try log.readNew() }
            if let added { state.withLock { $0.learn(added) } }
        }
        return state.withLock { $0.tokens[token] }
    }

    public var userNames: [String] { state.withLock { $0.users.keys.sorted() } }
}
