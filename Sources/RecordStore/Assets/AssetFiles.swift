import Foundation
import Glibc
import Synchronization
import ZoneCore

/// Asset files in a directory: `<receipt>` holds the bytes, `<receipt>.asset` what describes them
/// (checksum, size, owner; one per line). The bytes are synced and renamed into place first, then
/// the description is written durably (`replaceFileDurably`); an asset is only ever read through
/// its description, so a crash between the two leaves a file no one sees, which
/// `removeUnreferenced` takes away.
public final class AssetFiles: AssetStorage {
    public let directory: String
    /// Held by `touch` and `removeUnreferenced`, so that one never falls between the other's look
    /// at a file's time and its use of it.
    private let sweeping = Mutex(())
    /// Receipts being kept now: with the description's existence checked under it, a second
    /// upload under a receipt finds it taken. One process holds the data directory (its lock), so
    /// this is every writer.
    private let keeping = Mutex<Set<String>>([])
    /// The signing key, once read or made.
    private let key = Mutex<[UInt8]?>(nil)
    /// The file holding the signing key; not a receipt, so the sweep never takes it.
    public static let keyFileName = "signing-key"

    /// Makes `directory` (mode 0700) if it is missing.
    public init(directory: String) throws(StoreError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.internalError, "cannot make the asset directory \(directory): \(error)")
        }
    }

    /// A fresh directory under the system's temporary directory, for a store kept in memory.
    public static func temporary() throws(StoreError) -> AssetFiles {
        try AssetFiles(directory: FileManager.default.temporaryDirectory.path
                       + "/zonertc-assets-\(getpid())-\(StoredAsset.newReceipt())")
    }

    private func dataPath(_ receipt: String) -> String { "\(directory)/\(receipt)" }
    private func descriptionPath(_ receipt: String) -> String { "\(directory)/\(receipt).asset" }

    @discardableResult
    public func keep(_ asset: StoredAsset, fileAt path: String) async throws(StoreError) -> Bool {
        try keepOnce(asset) { () throws(StoreError) in
            let target = dataPath(asset.receipt)
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw StoreError(.internalError, "cannot open the upload \(path): \(errnoText())") }
            let synced = fsync(fd) == 0
            close(fd)
            guard synced else { throw StoreError(.internalError, "cannot sync the upload: \(errnoText())") }
            if rename(path, target) != 0 {
                // Another file system (a spool directory elsewhere): copied, then synced.
                switch readFileBytes(path) {
                case .success(let bytes)?: try writeData(bytes, to: target)
                case .failure(let e)?: throw StoreError(.internalError, "cannot read the upload: \(e)")
                case nil: throw StoreError(.internalError, "the upload \(path) is gone")
                }
            }
        }
    }

    @discardableResult
    public func keep(_ asset: StoredAsset, bytes: [UInt8]) async throws(StoreError) -> Bool {
        try keepOnce(asset) { () throws(StoreError) in try writeData(bytes, to: dataPath(asset.receipt)) }
    }

    /// Writes the bytes (`write`) and then the description of `asset`, unless its receipt is kept
    /// or being kept already.
    private func keepOnce(_ asset: StoredAsset, _ write: () throws(StoreError) -> Void) throws(StoreError) -> Bool {
        guard StoredAsset.isReceipt(asset.receipt) else { throw StoreError(.invalidArguments, "not a receipt") }
        let claimed = keeping.withLock { keeping in
            access(descriptionPath(asset.receipt), F_OK) != 0 && keeping.insert(asset.receipt).inserted
        }
        guard claimed else { return false }
        defer { _ = keeping.withLock { $0.remove(asset.receipt) } }
        try write()
        try describe(asset)
        return true
    }

    public func signingKey() async throws(StoreError) -> [UInt8] {
        try key.withLock { key throws(StoreError) -> [UInt8] in
            if let key { return key }
            let path = "\(directory)/\(Self.keyFileName)"
            if let data = FileManager.default.contents(atPath: path) {
                guard let read = Hex.decode(Array(data.prefix(64))), read.count == 32 else {
                    throw StoreError(.internalError, "\(path) is damaged: remove it (upload URLs handed out lapse)")
                }
                key = read
                return read
            }
            let made = StoredAsset.newSigningKey()
            if let problem = replaceFileDurably(path, with: Array((Hex.encode(made) + "\n").utf8), mode: 0o600) {
                throw StoreError(.internalError, problem)
            }
            key = made
            return made
        }
    }

    private func writeData(_ bytes: [UInt8], to target: String) throws(StoreError) {
        if let problem = replaceFileDurably(target, with: bytes, mode: 0o600) {
            throw StoreError(.internalError, problem)
        }
    }

    private func describe(_ asset: StoredAsset) throws(StoreError) {
        let text = "\(asset.fileChecksum)\n\(asset.size)\n\(asset.owner)\n"
        if let problem = replaceFileDurably(descriptionPath(asset.receipt), with: Array(text.utf8), mode: 0o600) {
            throw StoreError(.internalError, problem)
        }
    }

    public func asset(receipt: String) async throws(StoreError) -> StoredAsset? {
        try described(receipt)
    }

    private func described(_ receipt: String) throws(StoreError) -> StoredAsset? {
        guard StoredAsset.isReceipt(receipt),
              let data = FileManager.default.contents(atPath: descriptionPath(receipt)) else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, let size = Int64(lines[1]) else {
            throw StoreError(.internalError, "the asset description \(descriptionPath(receipt)) is damaged")
        }
        return StoredAsset(receipt: receipt, fileChecksum: String(lines[0]), size: size, owner: String(lines[2]))
    }

    public func bytes(receipt: String) async throws(StoreError) -> [UInt8]? {
        guard try await asset(receipt: receipt) != nil else { return nil }
        switch readFileBytes(dataPath(receipt)) {
        case .success(let bytes)?: return bytes
        case .failure(let e)?: throw StoreError(.internalError, "cannot read the asset: \(e)")
        case nil: return nil
        }
    }

    public func touch(receipt: String, now: Date) async throws(StoreError) -> StoredAsset? {
        try sweeping.withLock { _ throws(StoreError) -> StoredAsset? in
            guard let asset = try described(receipt) else { return nil }
            // Never earlier than it was: a clock behind the upload's must not age the file.
            var times = [timespec(now), timespec(now)]
            for path in [dataPath(receipt), descriptionPath(receipt)] {
                var info = stat()
                if stat(path, &info) == 0, info.st_mtim.tv_sec > times[1].tv_sec { continue }
                if utimensat(AT_FDCWD, path, &times, 0) != 0 {
                    throw StoreError(.internalError, "cannot mark the asset \(path) kept: \(errnoText())")
                }
            }
            return asset
        }
    }

    public func removeUnreferenced(referenced: Set<String>, keptBefore cutoff: Date) async throws(StoreError) -> Int {
        sweeping.withLock { _ in removeUnreferencedLocked(referenced: referenced, keptBefore: cutoff) }
    }

    private func removeUnreferencedLocked(referenced: Set<String>, keptBefore cutoff: Date) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var removed = 0
        for name in names {
            let receipt = name.hasSuffix(".asset") ? String(name.dropLast(6)) : name
            guard StoredAsset.isReceipt(receipt), !referenced.contains(receipt) else { continue }
            let path = "\(directory)/\(name)"
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                  modified < cutoff else { continue }
            // The description first: without it the bytes are no asset.
            if unlink(descriptionPath(receipt)) == 0 { removed += 1 }
            unlink(dataPath(receipt))
        }
        if removed > 0 { syncDirectory(directory) }
        return removed
    }
}

private extension timespec {
    init(_ date: Date) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        self.init(tv_sec: Int(seconds), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))
    }
}
