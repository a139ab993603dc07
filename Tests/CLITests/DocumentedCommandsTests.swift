// Every command line shown in README.md, CHANGELOG.md and docs/*.md (the lines of ```sh blocks) is run
// here, so a documented command cannot break unnoticed. Each line must have an entry in
// `DocumentedCommands.entries` (DocumentedCommands.swift) saying how: as written, in a quicker form,
// started in the background, or covered by a named test or CI step. A line with no entry fails, naming
// its file and line. The lines of one block run in order in one bash process, so variables and
// background daemons carry over from line to line.
import Foundation
import Glibc
import Testing
import TestSupport

/// A command line in a ```sh block of a document.
struct DocumentedLine: Sendable, CustomStringConvertible {
    /// The document, relative to the repository (`docs/STORE.md`).
    let file: String
    /// The line number of the command's first line.
    let line: Int
    /// The command with continuation lines joined and its trailing comment removed.
    let text: String

    var description: String { "\(file):\(line): \(text)" }
}

/// One ```sh block: the command lines a reader would paste together.
struct DocumentedBlock: Sendable, CustomStringConvertible {
    let file: String
    let line: Int
    let lines: [DocumentedLine]

    var description: String { "\(file):\(line)" }
}

/// Reading the documents' command lines.
enum DocumentedText {
    /// The repository's root, found from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md, CHANGELOG.md and docs/*.md, relative to the root.
    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))?
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 } ?? []
        return ["README.md", "CHANGELOG.md"].filter {
            FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path)
        } + docs
    }

    /// The info strings that mark a fenced block as commands to run.
    static let commandFences: Set<String> = ["sh", "bash", "shell"]

    /// Every ```sh block of every document.
    static var blocks: [DocumentedBlock] {
        documents.flatMap { file in
            let text = (try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)) ?? ""
            return blocks(in: text, file: file)
        }
    }

    static func blocks(in text: String, file: String) -> [DocumentedBlock] {
        var result: [DocumentedBlock] = []
        var current: (start: Int, lines: [DocumentedLine])?
        var inOtherFence = false
        var pending: (line: Int, text: String)?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                if let block = current {
                    result.append(DocumentedBlock(file: file, line: block.start, lines: block.lines))
                    current = nil
                } else if inOtherFence {
                    inOtherFence = false
                } else if commandFences.contains(String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces)) {
                    current = (number, [])
                } else {
                    inOtherFence = true
                }
                pending = nil
                continue
            }
            guard current != nil else { continue }
            var piece = String(raw)
            let continues = piece.hasSuffix("\\")
            if continues { piece.removeLast() }
            if let before = pending {
                pending = (before.line, before.text + " " + piece.trimmingCharacters(in: .whitespaces))
            } else {
                pending = (number, piece)
            }
            if continues { continue }
            let command = withoutComment(pending!.text).trimmingCharacters(in: .whitespaces)
            if !command.isEmpty {
                current!.lines.append(DocumentedLine(file: file, line: pending!.line, text: command))
            }
            pending = nil
        }
        return result
    }

    /// `line` without a shell comment: a `#` at the start of a word, outside quotes.
    static func withoutComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        var escaped = false
        for index in line.indices {
            let c = line[index]
            defer { previous = c }
            if escaped { escaped = false; continue }
            if c == "\\" && quote != "'" { escaped = true; continue }
            if let q = quote {
                if c == q { quote = nil }
                continue
            }
            if c == "'" || c == "\"" { quote = c; continue }
            if c == "#" && previous.isWhitespace { return String(line[..<index]) }
        }
        return line
    }
}

@Suite("The commands the documents show", .serialized)
struct DocumentedCommandsTests {
    @Test("every command line in the documents has an entry, and every entry a line")
    func everyLineHasAnEntry() {
        let entries = DocumentedCommands.table
        for duplicate in entries.duplicates {
            Issue.record("DocumentedCommands.entries lists `\(duplicate)` twice")
        }
        let lines = DocumentedText.blocks.flatMap(\.lines)
        for line in lines where entries.byText[line.text] == nil {
            Issue.record("""
                \(line.file):\(line.line): `\(line.text)` has no entry in DocumentedCommands.entries \
                (Tests/CLITests/DocumentedCommands.swift): add one saying how to run it
                """)
        }
        let shown = Set(lines.map(\.text))
        for text in entries.byText.keys where !shown.contains(text) {
            Issue.record("DocumentedCommands.entries has `\(text)`, which no document shows any more: remove it")
        }
    }

    @Test("each `swift test --filter X` shown names tests that exist")
    func testFiltersNameTests() throws {
        let sources = try testSourcesText()
        for line in DocumentedText.blocks.flatMap(\.lines) {
            guard case .testFilter = DocumentedCommands.table.byText[line.text]?.run else { continue }
            let words = line.text.split(separator: " ").map(String.init)
            guard let at = words.firstIndex(of: "--filter"), at + 1 < words.count else {
                Issue.record("\(line): a test filter line without --filter")
                continue
            }
            let filter = words[at + 1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            for alternative in filter.split(separator: "|") where !sources.contains(String(alternative)) {
                Issue.record("\(line): no test under Tests/ is named like '\(alternative)'")
            }
        }
    }

    /// Every block with a line to run, for `runs`.
    static var runnableBlocks: [DocumentedBlock] {
        DocumentedText.blocks.filter { block in
            block.lines.contains { DocumentedCommands.table.byText[$0.text]?.run.runsHere == true }
        }
    }

    @Test("runs", arguments: runnableBlocks)
    func runs(_ block: DocumentedBlock) async throws {
        try await offPool { try DocumentedBlockRun(block).run() }
    }

    private func testSourcesText() throws -> String {
        let tests = DocumentedText.root.appendingPathComponent("Tests")
        var text = ""
        let walker = FileManager.default.enumerator(atPath: tests.path)
        while let path = walker?.nextObject() as? String {
            text += path + "\n"
            if path.hasSuffix(".swift") {
                text += (try? String(contentsOf: tests.appendingPathComponent(path), encoding: .utf8)) ?? ""
            }
        }
        return text
    }
}

/// One block, run as a bash script from the repository's root, in a session of its own so that every
/// process it starts is stopped with it (by the process group the script leads).
struct DocumentedBlockRun {
    let block: DocumentedBlock
    let entries: [DocumentedCommand]

    init(_ block: DocumentedBlock) throws {
        self.block = block
        entries = block.lines.map { DocumentedCommands.table.byText[$0.text] ?? .missing }
    }

    func run() throws {
        if let missing = entries.flatMap(\.needs).first(where: { !DocumentedCommand.isInstalled($0) }) {
            guard ExternalProgram.underCI else {
                print("skipped: \(block) needs \(missing)")
                return
            }
            Issue.record("\(block) needs \(missing), which is not installed (.ci/install installs it)")
            return
        }
        if let trait = entries.compactMap(\.trait).first(where: { !$0.inThisBuild }) {
            print("skipped: \(block) needs the \(trait.rawValue) trait, which this build lacks")
            return
        }
        let work = try makeWorkDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let bin = work + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let zonertc = ZonertcProcess.binary.path
        let bench = ZonertcProcess.binary.deletingLastPathComponent().appendingPathComponent("zonertc-bench").path
        try FileManager.default.createSymbolicLink(atPath: bin + "/zonertc", withDestinationPath: zonertc)
        try FileManager.default.createSymbolicLink(atPath: bin + "/zonertc-bench", withDestinationPath: bench)

        let script = try self.script()
        let scriptPath = work + "/block.sh"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let environment = [
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "WORK": work,
            "ZONERTC_BIN": zonertc, "ZONERTC_BENCH_BIN": bench, "ZONERTC_AGAINST_BIN": zonertc,
            "ZONERTC_BENCH_QUICK": "1", "ZONERTC_ROOT": DocumentedText.root.path,
        ]
        let child = try spawnWatched(["setsid", "bash", scriptPath], environment: environment, defaultSignals: true)
        let limit = Duration.seconds(entries.map(\.limitSeconds).max() ?? 60)
        let started = ContinuousClock.now
        // The script's own end, not its pipes': a background process may hold them open.
        child.wait(within: limit) { $0.exitStatus != nil }
        let status = child.exitStatus
        print("\(block): \(status.map { "exit \($0)" } ?? "killed") after \(ContinuousClock.now - started)")
        // The script leads its own process group (its PID): whatever it left running goes with it.
        if status == nil {
            kill(-child.pid, SIGTERM)
            child.wait(within: .seconds(5)) { $0.exitStatus != nil }
        }
        kill(-child.pid, SIGKILL)
        _ = child.wait(within: .seconds(10))
        if status == nil {
            let output = "stdout:\n\(child.stdout.suffix(3000))\nstderr:\n\(child.stderr.suffix(3000))"
            Issue.record("\(block) did not finish within \(limit):\n\(script)\n\(output)")
            return
        }
        let detail = "\(script)\nstdout:\n\(child.stdout.suffix(4000))\nstderr:\n\(child.stderr.suffix(4000))"
        #expect(status == 0, "\(block) exited \(status ?? -1):\n\(detail)")
        for expected in entries.flatMap(\.expect) {
            #expect(child.stdout.contains(expected), "\(block): no '\(expected)' in its output:\n\(detail)")
        }
    }

    /// The block as a script: each line as its entry says, then the replacements every line gets
    /// (`DocumentedCommands.everywhere`, fresh loopback ports, /tmp/ → $WORK/).
    func script() throws -> String {
        var body: [String] = []
        for (line, entry) in zip(block.lines, entries) {
            var text = line.text
            switch entry.run {
            case .asWritten:
                break
            case .quick(let replacements):
                for replacement in replacements {
                    guard text.contains(replacement.from) else {
                        throw DocumentedCommandError("\(line): its entry replaces '\(replacement.from)', which the line lacks")
                    }
                    text = text.replacingOccurrences(of: replacement.from, with: replacement.to)
                }
            case .background(let until):
                guard text.hasSuffix("&") else {
                    throw DocumentedCommandError("\(line): a background entry for a line that does not end in &")
                }
                text = "started \(shellQuoted(until)) " + String(text.dropLast()).trimmingCharacters(in: .whitespaces)
            case .coveredBy, .testFilter:
                body.append(": # \(line.file):\(line.line) runs elsewhere")
                continue
            }
            for (pattern, replacement) in DocumentedCommands.everywhere {
                text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
            }
            body.append("echo \(shellQuoted("+ " + line.text)) >&2")
            body.append(text)
        }
        return try Self.prelude + withFreePorts(body.joined(separator: "\n")) + "\n"
    }

    /// `text` with each fixed loopback port (8470, 5004…) replaced by a free one, the same free port for
    /// the same number, so a block never meets a daemon someone else runs.
    private func withFreePorts(_ text: String) throws -> String {
        let regex = try NSRegularExpression(pattern: #"127\.0\.0\.1:([1-9][0-9]{3,4})\b"#)
        var chosen: [String: Int] = [:]
        var result = text
        for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            guard let whole = Range(match.range, in: result), let number = Range(match.range(at: 1), in: text)
            else { continue }
            let original = String(text[number])
            // A UDP port whose successor is free too (RTCP goes to PORT+1).
            var port = chosen[original] ?? Int(freeUDPPortPair())
            while chosen[original] == nil && chosen.values.contains(port) { port = Int(freeUDPPortPair()) }
            chosen[original] = port
            result.replaceSubrange(whole, with: "127.0.0.1:\(port)")
        }
        return result
    }

    /// Shell functions the scripts use: `started` runs a daemon in the background and waits for its
    /// ready line, reading its output through a pipe (no polling); the EXIT trap stops what was started.
    static let prelude = """
        set -euo pipefail
        cd "$ZONERTC_ROOT"
        pids=()
        trap 'for p in "${pids[@]}" $(jobs -p); do kill "$p" 2>/dev/null || true; done' EXIT
        AS_POSTGRES=""
        if [ "$(id -u)" = 0 ]; then AS_POSTGRES="setpriv --reuid=postgres --regid=postgres --init-groups --"; fi
        # started TEXT COMMAND…: COMMAND in the background, its output in a pipe held open here; waits
        # (30 s at most per line) until a line shows TEXT, then keeps copying the output to stderr.
        started() {
            local until=$1 fifo line fd
            shift
            fifo="$WORK/started.${#pids[@]}.$RANDOM"
            mkfifo "$fifo"
            exec {fd}<>"$fifo"
            "$@" >&"$fd" 2>&1 &
            pids+=($!)
            while IFS= read -r -t 30 -u "$fd" line; do
                printf '%s\\n' "$line" >&2
                if [[ $line == *"$until"* ]]; then
                    cat <&"$fd" >&2 &
                    pids+=($!)
                    return 0
                fi
            done
            echo "started: no '$until' from $* within 30 s" >&2
            return 1
        }

        """

    private func makeWorkDirectory() throws -> String {
        var template = Array("/tmp/zonertc-docs-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw DocumentedCommandError("mkdtemp failed") }
        let path = String(cString: made)
        chmod(path, 0o755)  // a cluster's directory under it must be reachable by the postgres user
        return path
    }
}

private func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

struct DocumentedCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
