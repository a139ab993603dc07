import Foundation
import RecordStore
import ZoneCore

/// The daemon's users on disk: `users.log` in the data directory, an append-only file of one
/// checksummed entry per user (name and bearer token), framed as the journal's entries are
/// (`JournalFormat`) behind a magic of its own. Registering a user appends one entry instead of
/// rewriting every user, so it costs the same with a million users as with one.
///
/// Several processes use the file at once (the daemon, `zonertc store user add`): every write and
/// every check of whether a name is taken happens under an exclusive `flock` after reading what the
/// others appended, so a name is only ever written once and no token goes to two users. The log is
/// only appended to (a torn tail left by a crash is cut off under the lock first), never rewritten.
/// Not thread-safe (`flock` does not exclude the threads of one process): `UserRegistry` uses it
/// under a mutex.
final class UserLog {
    /// One user.
    struct Entry: Sendable, Equatable {
        var name: String
        var token: String
    }

    struct LogError: Error, CustomStringConvertible {
        var description: String
    }

    static let fileName = "users.log"
    static let magic: [UInt8] = Array("ZRUSER1\n".utf8)
    /// The payload's kind byte: one user and its token. Other kinds are refused, not skipped.
    private static let userKind: UInt8 = 1

    let path: String
    let fd: Int32
    /// Where the entries read so far end: the next read starts here.
    private(set) var readOffset: Int

    /// Opens `directory/users.log`, creating it (mode 0600: it holds tokens) with its magic.
    init(directory: String) throws(LogError) {
        let path = "\(directory)/\(Self.fileName)"
        let fd = Glibc.open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LogError(description: "cannot open \(path): \(errnoText())") }
        do throws(LogError) {
            try Self.locked(fd, path, exclusive: true) { () throws(LogError) in
                if Self.fileSize(fd) < Self.magic.count {
                    guard ftruncate(fd, 0) == 0, writeFully(fd, Self.magic) == nil, fdatasync(fd) == 0 else {
                        throw LogError(description: "cannot write \(path): \(errnoText())")
                    }
                    let dirFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                    if dirFD >= 0 { fsync(dirFD); Glibc.close(dirFD) }
                }
            }
            guard try Self.read(fd, path, from: 0, count: Self.magic.count) == Self.magic else {
                throw LogError(description: "\(path) is not a ZoneRTC user log")
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.path = path
        self.fd = fd
        readOffset = Self.magic.count
    }

    deinit { Glibc.close(fd) }

    /// Runs `body` holding the file's `flock` (exclusive to write, shared to read), which every
    /// process using the file takes.
    func locked<T>(exclusive: Bool, _ body: () throws(LogError) -> T) throws(LogError) -> T {
        try Self.locked(fd, path, exclusive: exclusive, body)
    }

    private static func locked<T>(_ fd: Int32, _ path: String, exclusive: Bool,
                                  _ body: () throws(LogError) -> T) throws(LogError) -> T {
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw LogError(description: "cannot lock \(path): \(errnoText())") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Whether another process may have appended since the last read (one `fstat`).
    var mayHaveGrown: Bool { Self.fileSize(fd) > readOffset }

    /// The entries appended since the last read (under the lock). Unreadable bytes at the end are
    /// left for the next writer to cut off; unreadable bytes with intact entries after them are damage.
    func readNew() throws(LogError) -> [Entry] {
        let size = Self.fileSize(fd)
        guard size > readOffset else { return [] }
        let bytes = try Self.read(fd, path, from: readOffset, count: size - readOffset)
        let found = JournalFormat.entries(in: bytes, from: 0)
        if let damage = found.damage {
            throw LogError(description: "\(path) is damaged at offset \(readOffset + damage.offset): unreadable "
                           + "bytes before an intact entry at offset \(readOffset + damage.nextIntactEntry)")
        }
        var entries: [Entry] = []
        entries.reserveCapacity(found.entries.count)
        for payload in found.entries {
            guard let entry = Self.decode(payload) else {
                throw LogError(description: "\(path): an entry at offset \(readOffset) passes its checksum but "
                               + "cannot be read; was it written by a newer ZoneRTC?")
            }
            entries.append(entry)
        }
        readOffset += found.validLength
        return entries
    }

    /// Appends entries (under the exclusive lock, after `readNew`): a torn tail a crash left is cut off
    /// first, so the new entries follow the last intact one. Not yet durable: `fdatasync` the file.
    func append(_ entries: [Entry]) throws(LogError) {
        guard !entries.isEmpty else { return }
        if Self.fileSize(fd) > readOffset {
            guard ftruncate(fd, off_t(readOffset)) == 0 else {
                throw LogError(description: "cannot cut the torn tail of \(path): \(errnoText())")
            }
        }
        var bytes: [UInt8] = []
        for entry in entries { JournalFormat.frame(Self.encode(entry), into: &bytes) }
        if let problem = writeFully(fd, bytes) {
            throw LogError(description: "cannot append to \(path): \(problem)")
        }
        readOffset += bytes.count
    }

    /// Makes every append so far durable.
    func sync() throws(LogError) {
        guard fdatasync(fd) == 0 else { throw LogError(description: "cannot sync \(path): \(errnoText())") }
    }

    // MARK: Entries

    static func encode(_ entry: Entry) -> [UInt8] {
        var w = ByteWriter(capacity: 8 + entry.name.utf8.count + entry.token.utf8.count)
        w.writeUInt8(userKind)
        w.writeUInt16(UInt16(entry.name.utf8.count))
        w.writeBytes(Array(entry.name.utf8))
        w.writeUInt16(UInt16(entry.token.utf8.count))
        w.writeBytes(Array(entry.token.utf8))
        return w.bytes
    }

    /// One entry's payload; nil unless it is a user entry of exactly this shape.
    static func decode(_ payload: ArraySlice<UInt8>) -> Entry? {
        var r = ByteReader(Array(payload))
        guard let kind = try? r.readUInt8(), kind == userKind,
              let nameLength = try? r.readUInt16(), let name = try? r.readBytes(Int(nameLength)),
              let tokenLength = try? r.readUInt16(), let token = try? r.readBytes(Int(tokenLength)),
              r.remaining == 0,
              let nameText = String(validating: name, as: UTF8.self),
              let tokenText = String(validating: token, as: UTF8.self),
              UserRegistry.nameProblem(nameText) == nil, !tokenText.isEmpty
        else { return nil }
        return Entry(name: nameText, token: tokenText)
    }

    // MARK: The file

    private static func read(_ fd: Int32, _ path: String, from offset: Int, count: Int) throws(LogError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { bytes.removeLast(count - done); break }
                throw LogError(description: "cannot read \(path): \(errnoText())")
            }
            done += n
        }
        return bytes
    }

    private static func fileSize(_ fd: Int32) -> Int {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }

}
