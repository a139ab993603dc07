import Foundation
import RecordStore

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
        if let problem = replaceFileDurably(path, with: Array(all.map { $0 + "\n" }.joined().utf8), mode: 0o600) {
            throw FileError(description: problem)
        }
        return all
    }
}
