import RecordStore

/// `zonertc store inspect`: what a store directory holds, read without taking it over.
enum StoreInspectCommand {
    static let spec = CommandSpec(
        path: ["store", "inspect"],
        summary: "Show a store directory's zones, record counts by type, journal size and the last token per zone.",
        options: [
            .value("--data", "DIR", "the store's data directory"),
            .value("--postgres", "URL", PostgresOption.help),
            .flag("--json", "print one JSON object instead of tables"),
        ],
        discussion: """
            Reads the snapshot and journal (or the database's log) without changing them, so it works while
            daemons run on them. Give --data DIR or --postgres URL.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        let report: StoreInspection
        let dir: String
        switch (args.string("--data"), args.string("--postgres")) {
        case (let d?, nil):
            dir = d
            report = try EmbeddedStore.inspect(directory: d)
        case (nil, let url?):
            dir = url
            report = try await PostgresOption.inspect(url: url, spec: spec)
        case (nil, nil): throw UsageError(message: "give --data DIR or --postgres URL", command: spec)
        case (_?, _?): throw UsageError(message: "--data and --postgres exclude each other", command: spec)
        }
        if args.has("--json") {
            print(try Terminal.json(report))
            return 0
        }
        print("store \(dir): generation \(report.generation), journal \(Terminal.bytes(report.journalBytes)) "
              + "(\(report.journalEntries) entries), snapshot \(Terminal.bytes(report.snapshotBytes))")
        if report.tornBytes > 0 {
            print("journal tail: \(report.tornBytes) bytes after the last intact entry (an append in progress, or a torn tail that the next open drops)")
        }
        print("users: \(report.users.isEmpty ? "none" : report.users.joined(separator: ", "))")
        guard !report.zones.isEmpty else {
            print("no zones")
            return 0
        }
        let rows = report.zones.map { z -> [String] in
            let types = z.recordsByType.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return [z.zoneName, z.ownerName, String(z.records), types.isEmpty ? "-" : types, String(z.tombstones),
                    z.sharedWith.isEmpty ? "-" : z.sharedWith.joined(separator: ","), z.lastToken]
        }
        print(Terminal.table(["zone", "owner", "records", "by type", "deleted", "shared with", "last token"], rows))
        return 0
    }
}
