import Foundation
import Testing

/// docs/CLI.md against the binary's own help, so the documented commands and options cannot drift from
/// what `zonertc` accepts. After changing a command's options, run docs/gen-cli.sh.
@Suite("docs/CLI.md against zonertc help")
struct CLIReferenceTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/CLI.md")
    static let begin = "<!-- BEGIN zonertc help --markdown"
    static let end = "<!-- END zonertc help --markdown"

    /// Options docs/CLI.md may name that belong to no command: the global ones, and `swift build`'s `--traits`.
    static let globalOptions: Set<String> = ["--log", "--help", "--version", "--markdown", "--traits"]

    @Test("the reference between the markers is `zonertc help --markdown`, as docs/gen-cli.sh writes it")
    func generatedReference() throws {
        let text = try String(contentsOf: Self.path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.firstIndex(where: { $0.hasPrefix(Self.begin) }),
              let last = lines.firstIndex(where: { $0.hasPrefix(Self.end) }), first < last else {
            Issue.record("docs/CLI.md lacks the '\(Self.begin)' and '\(Self.end)' markers")
            return
        }
        let documented = lines[(first + 1)..<last].joined(separator: "\n") + "\n"
        let output = try ZonertcProcess.run(["help", "--markdown"])
        #expect(output.status == 0)
        if documented != output.stdout {
            let want = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let have = documented.split(separator: "\n", omittingEmptySubsequences: false)
            let at = zip(want, have).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(want.count, have.count)
            Issue.record("""
                docs/CLI.md's command reference is not `zonertc help --markdown`: run docs/gen-cli.sh. \
                First difference at line \(first + 2 + at):
                  docs/CLI.md:  \(at < have.count ? String(have[at]) : "(end)")
                  zonertc help: \(at < want.count ? String(want[at]) : "(end)")
                """)
        }
    }

    @Test("every command and option of `zonertc help` is in docs/CLI.md, and docs/CLI.md names no other")
    func commandsAndOptions() throws {
        let text = try String(contentsOf: Self.path, encoding: .utf8)
        let commands = try Self.helpCommands()
        #expect(!commands.isEmpty, "`zonertc help` listed no commands")
        let sections = Self.sections(of: text)
        for name in commands where sections[name] == nil {
            Issue.record("`zonertc \(name)` is in `zonertc help` but has no '### zonertc \(name)' in docs/CLI.md")
        }
        for name in sections.keys where !commands.contains(name) {
            Issue.record("docs/CLI.md documents `zonertc \(name)`, which `zonertc help` does not list")
        }
        var known = Self.globalOptions
        for name in commands {
            let options = try Self.helpOptions(of: name)
            known.formUnion(options)
            for option in options where !(sections[name] ?? "").contains("`\(option)") {
                Issue.record("`zonertc \(name) \(option)` is in `zonertc help \(name)` but not in docs/CLI.md")
            }
        }
        let named = Set(text.allMatches(of: #"(?<![A-Za-z0-9-])--[a-z][a-z0-9-]*"#))
        for option in named.subtracting(known).sorted() {
            Issue.record("docs/CLI.md names \(option), which no command's `zonertc help` knows")
        }
    }

    /// The command names `zonertc help` lists (`store serve`, `peer`, …).
    static func helpCommands() throws -> [String] {
        let overview = try ZonertcProcess.run(["help"]).stdout
        var names: [String] = []
        var inCommands = false
        for line in overview.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("commands:") { inCommands = true; continue }
            guard inCommands else { continue }
            guard line.hasPrefix("  "), let gap = line.dropFirst(2).range(of: "  ") else { break }
            names.append(String(line.dropFirst(2)[..<gap.lowerBound]))
        }
        return names
    }

    /// The options `zonertc help NAME` lists.
    static func helpOptions(of name: String) throws -> Set<String> {
        let help = try ZonertcProcess.run(["help"] + name.split(separator: " ").map(String.init)).stdout
        var options: Set<String> = []
        var inOptions = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("options:") { inOptions = true; continue }
            guard inOptions else { continue }
            guard line.hasPrefix("  --") else { if line.isEmpty { break } else { continue } }
            options.insert(String(line.dropFirst(2).prefix { $0 != " " }))
        }
        return options
    }

    /// Each `### zonertc NAME` section of `text`, by NAME.
    static func sections(of text: String) -> [String: String] {
        var result: [String: String] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") || line.hasPrefix("### ") {
                current = line.hasPrefix("### zonertc ") ? String(line.dropFirst("### zonertc ".count)) : nil
                if let current { result[current] = "" }
                continue
            }
            if let current { result[current, default: ""] += line + "\n" }
        }
        return result
    }
}

extension String {
    /// Every match of the regular expression `pattern`.
    func allMatches(of pattern: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: self, range: NSRange(startIndex..., in: self)).compactMap {
            Range($0.range, in: self).map { String(self[$0]) }
        }
    }
}
