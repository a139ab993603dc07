import Foundation

/// The command reference of docs/CLI.md, made from the commands' specs (`zonertc help --markdown`), so
/// the documentation and `zonertc help` cannot drift apart: docs/gen-cli.sh writes it into the file, and
/// a test (Tests/CLITests/CLIReferenceTests.swift) compares the two. Build-dependent defaults are stated
/// the same way in every build (`OptionSpec.defaultInDocs`).
enum CLIReference {
    /// The reference for `commands`: one section per command, in the order `zonertc help` lists them.
    static func markdown(_ commands: [CommandSpec]) -> String {
        var lines = ["| command | what it does |", "|---|---|"]
        for command in commands {
            lines.append("| [`zonertc \(command.name)`](#\(anchor(command))) | \(cell(command.summary)) |")
        }
        for command in commands {
            lines += [""] + section(command)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func section(_ command: CommandSpec) -> [String] {
        var lines = ["### zonertc \(command.name)", "", command.summary, "", "```", command.usageLine, "```"]
        if let discussion = command.discussion {
            lines += ["", discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")]
        }
        if !command.positionals.isEmpty {
            lines += ["", "| argument | meaning |", "|---|---|"]
            for p in command.positionals { lines.append("| `\(p.name)` | \(cell(p.help)) |") }
        }
        if !command.options.isEmpty {
            lines += ["", "| option | default | meaning |", "|---|---|---|"]
            for o in command.options {
                let name = o.value.map { "\(o.name) \($0)" } ?? o.name
                let shown = o.defaultInDocs ?? o.defaultValue
                let byDefault = shown.map { "`\($0)`" } ?? ""
                let help = o.repeatable && !o.help.contains("repeatable") ? o.help + " (repeatable)" : o.help
                lines.append("| `\(name)` | \(cell(byDefault)) | \(cell(help)) |")
            }
        }
        return lines
    }

    /// The heading's anchor as GitHub makes it: lower case, spaces to hyphens, other punctuation dropped.
    static func anchor(_ command: CommandSpec) -> String {
        ("zonertc " + command.name).lowercased().replacingOccurrences(of: " ", with: "-")
    }

    /// Text for a table cell: a `|` would end the cell.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
