import Foundation
import Synchronization

/// The daemon's users and their bearer tokens, kept in `users.json` in the data directory
/// (written atomically) or only in memory.
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
    }

    private let state = Mutex(State())
    private let path: String?
    /// When the file was last read, so users added by `zonertc store user add` while the daemon
    /// runs are picked up on their first request.
    private let loadedModification = Mutex<Date?>(nil)

    /// Loads `users.json` from `directory` (nil: in memory only).
    public init(directory: String?) throws {
        path = directory.map { "\($0)/users.json" }
        try reload()
    }

    private func reload() throws {
        guard let path, let data = FileManager.default.contents(atPath: path) else { return }
        let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        guard let o = try? JSONSerialization.jsonObject(with: data) as? [String: String] else {
            throw RegistryError(description: "\(path) is not a JSON object of user names to tokens")
        }
        state.withLock { s in
            for (user, token) in o { s.users[user] = token; s.tokens[token] = user }
        }
        loadedModification.withLock { $0 = modified }
    }

    private func reloadIfChanged() {
        guard let path else { return }
        let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        if modified != nil && modified != loadedModification.withLock({ $0 }) { try? reload() }
    }

    /// Whether a user name is acceptable (what CloudKit user record names look like, and more).
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > 255 { return "a user name has 1 to 255 characters" }
        let ok = name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E }
        return ok ? nil : "a user name may hold letters, digits, '_', '-' and '.'"
    }

    /// Creates a user (or returns the existing user's token) and persists the registry. This is the
    /// operator's path (`zonertc store user add`), who can read `users.json` anyway; remote callers
    /// go through `register`, which never returns an existing user's token.
    public func add(_ name: String) throws -> String {
        try create(name, existing: { $0 })
    }

    /// Creates a new user and returns its token; an existing name throws `.exists` and reveals nothing.
    public func register(_ name: String) throws -> String {
        try create(name, existing: { _ in
            throw RegistryError(kind: .exists, description: "the user '\(name)' already exists")
        })
    }

    private func create(_ name: String, existing: (String) throws -> String) throws -> String {
        if let problem = UserRegistry.nameProblem(name) {
            throw RegistryError(kind: .invalidName, description: problem)
        }
        reloadIfChanged()  // a user added beside the daemon exists for registration too
        let (found, token, snapshot): (String?, String, [String: String]) = state.withLock { s in
            if let t = s.users[name] { return (t, "", [:]) }
            var rng = SystemRandomNumberGenerator()
            let t = (0..<4).map { _ in String(format: "%016llx", rng.next() as UInt64) }.joined()
            s.users[name] = t
            s.tokens[t] = name
            return (nil, t, s.users)
        }
        if let found { return try existing(found) }
        try persist(snapshot)
        return token
    }

    /// The user a bearer token belongs to.
    public func user(forToken token: String) -> String? {
        if let user = state.withLock({ $0.tokens[token] }) { return user }
        reloadIfChanged()
        return state.withLock { $0.tokens[token] }
    }

    public var userNames: [String] { state.withLock { $0.users.keys.sorted() } }

    private func persist(_ users: [String: String]) throws {
        guard let path else { return }
        let data = try JSONSerialization.data(withJSONObject: users, options: [.sortedKeys, .prettyPrinted])
        let tmp = path + ".tmp"
        guard FileManager.default.createFile(atPath: tmp, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw RegistryError(description: "cannot write \(tmp): \(String(cString: strerror(errno)))")
        }
        let fd = open(tmp, O_RDONLY)
        if fd >= 0 { fsync(fd); close(fd) }
        guard rename(tmp, path) == 0 else { throw RegistryError(description: "cannot replace \(path)") }
    }
}
