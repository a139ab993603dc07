import RecordStore

/// `zonertc store repair`: salvages the intact entries of a damaged journal, keeping the original.
enum StoreRepairCommand {
    static let spec = CommandSpec(
        path: ["store", "repair"],
        summary: "Salvage every intact entry of a damaged journal (the original is kept) and say what was dropped.",
        options: [.value("--data", "DIR", "(required) the store's data directory; no daemon may hold it")],
        discussion: """
            `store serve` refuses a journal whose unreadable bytes are followed by intact entries, naming the
            offset. Repair copies the journal to journal-G.log.damaged-<time>, rewrites it with every intact
            entry (reading on from the next intact entry after each damaged stretch) and lists each stretch it
            dropped: offset, bytes and the entries it probably held. Exit 0 after a repair or when there was
            nothing to repair, 1 when it could not repair.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        let dir = try args.required("--data")
        let report: StoreRepair.Report
        do { report = try StoreRepair.run(directory: dir) } catch {
            Terminal.error("zonertc store repair: \(error)")
            return 1
        }
        guard report.changed else {
            print("zonertc store repair: \(report.journalPath) has no damage (\(report.entriesKept) intact entries); "
                  + "nothing changed")
            return 0
        }
        print("zonertc store repair: \(report.journalPath): kept \(report.entriesKept) intact entries; "
              + "the original is in \(report.originalCopy ?? "-")")
        for d in report.dropped {
            let what = d.isTail ? "torn tail" : "damaged"
            print("dropped \(what) at offset \(d.offset): \(d.bytes) bytes, about \(d.estimatedEntries) "
                  + (d.estimatedEntries == 1 ? "entry" : "entries"))
        }
        if report.undecodableEntries > 0 {
            print("dropped \(report.undecodableEntries) entries that pass their checksum but do not decode")
        }
        return 0
    }
}
