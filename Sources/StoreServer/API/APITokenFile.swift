import Foundation

/// The container's API tokens in the data directory: `api-tokens`, one token a line, mode 0600.
///
/// `zonertc store serve --data DIR --api-token T` adds T to what the file holds, so a restart without
/// `--api-token` still accepts every token declared before. The file is replaced whole (written
/// beside, synced, renamed over, the directory synced): a crash leaves the old list or the new one.
public enum APITokenFile {
    public static let fileName = "api-tokens"

    public struct FileError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The tokens remembered in `directory` plus `tokens`, written back when any is new.
    public static func remember(_ tokens: [String], in directory: String) throws -> [String] {
        let path = "\(directory)/\(fileName)"
        var known: [String] = []
        if let data = FileManager.default.contents(atPath: path) {
            guard let text = String(data: data, encoding: .utf8) else {
                throw FileError(description: "\(path) is not text: one API token a line")
            }
            for line in text.split(separator: "\n") where !line.isEmpty {
                guard APITokens.problem(String(line)) == nil else {
                    throw FileError(description: "\(path) holds a line that is not an API token (remove it)")
                }
                if !known.contains(String(line)) { known.append(String(line)) }
            }
        }
        let added = tokens.filter { !known.contains($0) }
        guard !added.isEmpty else { return known }
        let all = known + added.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        try write(all.map { $0 + "\n" }.joined(), to: path, directory: directory)
        return all
    }

    private static func write(_ text: String, to path: String, directory: String) throws {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw FileError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                throw FileError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            written += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            throw FileError(description: "cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }
}
