import Foundation
import ZoneCore

/// `zonertc store repair`: salvages every intact entry of a damaged journal, keeping the original.
///
/// The daemon refuses a journal with unreadable bytes before intact entries (they may be
/// acknowledged writes). Repair is the operator's decision to go on without the unreadable
/// stretches: the original is copied aside first, then the journal is rewritten with the entries
/// `JournalSalvage` found, and the report says what was dropped.
public enum StoreRepair {
    /// What a repair found and did.
    public struct Report: Sendable {
        public var journalPath: String
        /// Where the original journal was copied; nil when nothing needed repair.
        public var originalCopy: String?
        public var entriesKept: Int
        public var dropped: [JournalSalvage.Dropped]
        /// Entries that passed their checksum but do not decode as mutations (dropped too).
        public var undecodableEntries: Int

        public var changed: Bool { originalCopy != nil }
    }

    public struct RepairError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Repairs the current journal of `directory`; the directory must not be open elsewhere.
    public static func run(directory: String, now: Date = Date()) throws -> Report {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw RepairError(description: "no store directory at \(directory)")
        }
        let lockFD: Int32
        do { lockFD = try StoreDirectory.lock(directory) } catch {
            throw RepairError(description: "\(error): stop the daemon before repairing")
        }
        defer { flock(lockFD, LOCK_UN); close(lockFD) }
        let loaded = try StoreDirectory.loadSnapshot(path: directory, configuration: .default)
        var engine = loaded.0
        let generation = loaded.1.generation
        let journalPath = "\(directory)/journal-\(generation).log"
        var report = Report(journalPath: journalPath, entriesKept: 0, dropped: [], undecodableEntries: 0)
        guard let data = FileManager.default.contents(atPath: journalPath) else { return report }
        let original = [UInt8](data)
        var salvage: JournalSalvage
        do { salvage = try JournalSalvage(original) } catch {
            throw RepairError(description: "\(journalPath): \(error)")
        }
        guard salvage.generation == generation else {
            throw RepairError(description: "\(journalPath) follows generation \(salvage.generation), the snapshot is "
                              + "generation \(generation): not a damage repair can undo")
        }
        // An entry is kept only if it replays, as recovery would replay it.
        var kept: [ArraySlice<UInt8>] = []
        for payload in salvage.entries {
            var r = ByteReader(Array(payload))
            if let mutations = try? MutationCodec.decodeMutations(&r) {
                for m in mutations { engine.replay(m) }
                kept.append(payload)
            } else {
                report.undecodableEntries += 1
            }
        }
        salvage.entries = kept
        report.entriesKept = kept.count
        report.dropped = salvage.dropped
        guard !salvage.dropped.isEmpty || report.undecodableEntries > 0 else { return report }

        let copy = "\(journalPath).damaged-\(Int(now.timeIntervalSince1970))"
        try write(original, to: copy, exclusive: true)
        report.originalCopy = copy
        let tmp = journalPath + ".repair"
        try write(salvage.repairedJournal, to: tmp, exclusive: false)
        guard rename(tmp, journalPath) == 0 else {
            throw RepairError(description: "cannot replace \(journalPath): \(errnoText()) (the original is in \(copy))")
        }
        syncDirectory(directory)
        return report
    }

    private static func write(_ bytes: [UInt8], to path: String, exclusive: Bool) throws {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw RepairError(description: "cannot create \(path): \(errnoText())") }
        defer { close(fd) }
        if let problem = writeFully(fd, bytes) { throw RepairError(description: "cannot write \(path): \(problem)") }
        guard fsync(fd) == 0 else { throw RepairError(description: "cannot sync \(path): \(errnoText())") }
    }
}
