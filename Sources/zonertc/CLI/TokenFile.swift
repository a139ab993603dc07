import Foundation
import StoreServer
import ZoneCore

/// A store bearer token kept in a file only its owner may read (mode 0600).
///
/// A daemon hands out a user's token once, when it registers the user; whoever registered keeps
/// it here so a later run as the same user reuses it (`zonertc peer --token-file`), and
/// `zonertc call` and the benches register their users and hand each peer its file, which keeps
/// tokens out of command lines that `ps` shows.
struct TokenFile {
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    let path: String

    /// The token in the file; nil when there is no file yet.
    func read() throws -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw Problem(description: "cannot read the token file \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw Problem(description: "the token file \(path) may be read by others: `chmod 600 \(path)`")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "cannot read the token file \(path)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.count <= 1024, !token.contains(where: { $0.isWhitespace }) else {
            throw Problem(description: "the token file \(path) does not hold one token")
        }
        return token
    }

    /// Writes a new file of mode 0600; never replaces an existing one (another run's token).
    func create(_ token: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Problem(description: "cannot create the token file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw Problem(description: "cannot write the token file \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The token in the file, or, when there is none, a new user registered at `endpoint` whose token
    /// the file then keeps.
    func tokenRegisteringIfMissing(user: String, at endpoint: Endpoint) async throws -> String {
        if let token = try read() { return token }
        let token = try await RemoteStoreClient.register(userName: user, at: endpoint)
        try create(token)
        return token
    }

    /// Registers `users` at a daemon and writes one token file each in `directory`, for peers started
    /// with `--token-file`; returns the paths by user. `newStore`: the daemon's store is new, so token
    /// files already in `directory` belong to an earlier one and are replaced; otherwise they are
    /// reused (`zonertc call --keep DIR` run again on the same store).
    static func register(_ users: [String], storeURL: String, directory: String,
                         newStore: Bool) async throws -> [String: String] {
        let endpoint = try RemoteStoreClient.endpoint(fromURL: storeURL)
        var paths: [String: String] = [:]
        for user in users {
            let file = TokenFile(path: "\(directory)/\(user).token")
            if newStore { try? FileManager.default.removeItem(atPath: file.path) }
            _ = try await file.tokenRegisteringIfMissing(user: user, at: endpoint)
            paths[user] = file.path
        }
        return paths
    }
}
