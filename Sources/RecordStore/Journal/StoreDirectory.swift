import Foundation
import ZoneCore

/// The files of a durable store: `snapshot` (the state at the last compaction), the journal
/// `journal-<generation>.log` that extends it, and `LOCK`, held while a process has it open.
///
/// Recovery loads the snapshot, replays the journal's intact entries and truncates a torn tail
/// (an append interrupted by a crash: never acknowledged). Damage anywhere else — unreadable
/// bytes with intact entries after them — is refused with its offset and the file left as it
/// is, rather than silently dropping acknowledged writes; `repair` salvages around it.
final class StoreDirectory: @unchecked Sendable {
    struct OpenError: Error, CustomStringConvertible {
        var description: String
    }

    /// What recovery found.
    struct Recovery: Sendable {
        var generation: UInt64
        var snapshotBytes: Int
        var entriesReplayed: Int
        var tornBytesDropped: Int
    }

    /// A torn tail is at most what one sync covered (one batch); more unreadable bytes than
    /// this after the last intact entry can only be damage, and opening refuses it.
    static let maxTornTail = 16 * 1024 * 1024

    let path: String
    private(set) var generation: UInt64
    private let lockFD: Int32

    var journalPath: String { "\(path)/journal-\(generation).log" }
    var snapshotPath: String { "\(path)/snapshot" }

    private init(path: String, generation: UInt64, lockFD: Int32) {
        self.path = path
        self.generation = generation
        self.lockFD = lockFD
    }

    private var released = false

    deinit { release() }

    /// Gives up the directory lock so another store (or process) may open it.
    func release() {
        guard !released else { return }
        released = true
        flock(lockFD, LOCK_UN)
        close(lockFD)
    }

    /// Opens (creating if needed) the directory, recovers the state and opens the journal for appends.
    static func open(path: String, policy: FsyncPolicy, configuration: StoreConfiguration,
                     maxTornTail: Int = StoreDirectory.maxTornTail)
        throws -> (StoreDirectory, StoreEngine, JournalWriter, Recovery)
    {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw OpenError(description: "cannot create store directory \(path): \(error.localizedDescription)")
        }
        let lockFD = try lock(path)
        let (engine, recovery, scannedLength) : (StoreEngine, Recovery, Int)
        do {
            (engine, recovery, scannedLength) = try recover(path: path, configuration: configuration,
                                                            maxTornTail: maxTornTail)
        } catch {
            flock(lockFD, LOCK_UN)
            close(lockFD)
            throw error
        }
        var validLength = scannedLength
        let dir = StoreDirectory(path: path, generation: recovery.generation, lockFD: lockFD)
        let journalPath = dir.journalPath
        // Earlier generations are leftovers of a compaction interrupted after its snapshot landed.
        dir.removeStaleJournals()

        let fd = Glibc.open(journalPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OpenError(description: "cannot open \(journalPath): \(errnoText())") }
        if validLength < JournalFormat.headerSize {
            // New, or only a torn header: start the file afresh.
            guard ftruncate(fd, 0) == 0 else { throw OpenError(description: "cannot truncate \(journalPath): \(errnoText())") }
            let header = JournalFormat.header(generation: recovery.generation)
            guard header.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == header.count,
                  fdatasync(fd) == 0 else {
                throw OpenError(description: "cannot write \(journalPath): \(errnoText())")
            }
            validLength = header.count
            syncDirectory(path)
        } else if recovery.tornBytesDropped > 0 {
            guard ftruncate(fd, off_t(validLength)) == 0, fdatasync(fd) == 0 else {
                throw OpenError(description: "cannot truncate the torn tail of \(journalPath): \(errnoText())")
            }
        }
        lseek(fd, off_t(validLength), SEEK_SET)
        let writer = JournalWriter(fd: fd, fileSize: validLength, policy: policy)
        return (dir, engine, writer, recovery)
    }

    /// Takes the directory's `LOCK` (an existing directory); returns its descriptor.
    static func lock(_ path: String) throws -> Int32 {
        let lockFD = Glibc.open("\(path)/LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw OpenError(description: "cannot open \(path)/LOCK: \(errnoText())") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFD)
            throw OpenError(description: "store directory \(path) is in use by another process")
        }
        return lockFD
    }

    /// Reads the snapshot and replays the journal without changing any file: what `open` does
    /// first, and all that `zonertc store inspect` needs (it works while a daemon holds the store).
    static func recover(path: String, configuration: StoreConfiguration,
                        maxTornTail: Int = StoreDirectory.maxTornTail) throws -> (StoreEngine, Recovery, Int) {
        var (engine, recovery) = try loadSnapshot(path: path, configuration: configuration)
        let journalPath = "\(path)/journal-\(recovery.generation).log"
        var validLength = 0
        if let data = FileManager.default.contents(atPath: journalPath) {
            let scan: JournalFormat.Scan
            do { scan = try JournalFormat.scan([UInt8](data)) } catch {
                throw OpenError(description: "\(journalPath): \(error)")
            }
            if let damage = scan.damage {
                let unreadable = damage.nextIntactEntry - damage.offset
                throw OpenError(description: "\(journalPath) is damaged at offset \(damage.offset): \(unreadable) "
                                + "unreadable bytes before an intact entry at offset \(damage.nextIntactEntry). "
                                + "Nothing was changed; `zonertc store repair --data \(path)` keeps a copy and "
                                + "salvages every intact entry")
            }
            if scan.tornBytes > maxTornTail {
                throw OpenError(description: "\(journalPath): \(scan.tornBytes) unreadable bytes after offset "
                                + "\(scan.validLength), more than an interrupted append leaves: the journal is damaged")
            }
            if scan.validLength >= JournalFormat.headerSize && scan.generation != recovery.generation {
                throw OpenError(description: "\(journalPath) follows generation \(scan.generation), "
                                + "the snapshot is generation \(recovery.generation)")
            }
            for (i, payload) in scan.entries.enumerated() {
                var r = ByteReader(Array(payload))
                do {
                    for m in try MutationCodec.decodeMutations(&r) { engine.replay(m) }
                } catch {
                    throw OpenError(description: "\(journalPath): entry \(i) passes its checksum but cannot be read "
                                    + "(\(error)); was it written by a newer ZoneRTC?")
                }
            }
            recovery.entriesReplayed = scan.entries.count
            recovery.tornBytesDropped = scan.tornBytes
            validLength = scan.validLength
        }
        return (engine, recovery, validLength)
    }

    /// The state in `snapshot` (empty, generation 0, when there is none yet).
    static func loadSnapshot(path: String, configuration: StoreConfiguration) throws -> (StoreEngine, Recovery) {
        var engine = StoreEngine(configuration: configuration)
        var recovery = Recovery(generation: 0, snapshotBytes: 0, entriesReplayed: 0, tornBytesDropped: 0)
        if let snapshot = FileManager.default.contents(atPath: "\(path)/snapshot") {
            let bytes = [UInt8](snapshot)
            guard bytes.count >= 4 else { throw OpenError(description: "snapshot in \(path) is truncated") }
            let body = Array(bytes[0..<(bytes.count - 4)])
            var r = ByteReader(bytes, offset: bytes.count - 4)
            let crc = try r.readUInt32()
            guard CRC32.checksum(body) == crc else {
                throw OpenError(description: "snapshot in \(path) fails its checksum: the file is damaged")
            }
            do {
                let (state, generation) = try SnapshotCodec.decode(body)
                engine.state = state
                recovery.generation = generation
                recovery.snapshotBytes = bytes.count
            } catch {
                throw OpenError(description: "snapshot in \(path) cannot be read: \(error)")
            }
        }
        return (engine, recovery)
    }

    /// Writes the state as snapshot generation+1, starts an empty journal for it and removes the
    /// old one. The caller holds the store lock and has flushed the writer.
    func compact(state: StoreState, writer: JournalWriter, pruneTombstonesBeforeMs: Int64) throws {
        let next = generation + 1
        var bytes = SnapshotCodec.encode(state, generation: next, pruneTombstonesBeforeMs: pruneTombstonesBeforeMs)
        let crc = CRC32.checksum(bytes)
        for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: crc >> UInt32(s))) }
        // A new empty journal first, then the snapshot's atomic rename makes generation+1 current.
        let newJournal = "\(path)/journal-\(next).log"
        let fd = Glibc.open(newJournal, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OpenError(description: "cannot create \(newJournal): \(errnoText())") }
        let header = JournalFormat.header(generation: next)
        guard header.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == header.count, fdatasync(fd) == 0 else {
            close(fd)
            throw OpenError(description: "cannot write \(newJournal): \(errnoText())")
        }
        try writeFileAtomically("\(path)/snapshot", bytes)
        let old = journalPath
        generation = next
        writer.switchFile(fd: fd, fileSize: header.count)
        unlink(old)
        syncDirectory(path)
    }

    private func removeStaleJournals() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where name.hasPrefix("journal-") && name.hasSuffix(".log") {
            let g = UInt64(name.dropFirst("journal-".count).dropLast(".log".count)) ?? UInt64.max
            if g < generation { unlink("\(path)/\(name)") }
        }
    }

    private func writeFileAtomically(_ target: String, _ bytes: [UInt8]) throws {
        if let problem = replaceFileDurably(target, with: bytes) { throw OpenError(description: problem) }
    }
}

/// The system's text for the last call's `errno`.
public func errnoText() -> String { String(cString: strerror(errno)) }
