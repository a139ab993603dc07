/// One option of a command: `--name VALUE` or a boolean `--name`.
struct OptionSpec: Sendable {
    let name: String
    /// The value's placeholder (`DIR`, `HOST:PORT`); nil for a boolean flag.
    let value: String?
    let help: String
    /// The value the command gets when the option is not given, exactly as if it had been: it must be
    /// one the option accepts (a description of a default belongs in `help`, not here).
    var defaultValue: String? = nil
    /// How docs/CLI.md states the default when it depends on the build's traits (the help text shows
    /// this build's `defaultValue`), so the generated reference is the same for every build.
    var defaultInDocs: String? = nil
    var repeatable = false

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: nil, help: help)
    }

    static func value(_ name: String, _ placeholder: String, _ help: String, default d: String? = nil,
                      defaultInDocs: String? = nil, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: placeholder, help: help, defaultValue: d, defaultInDocs: defaultInDocs,
                   repeatable: repeatable)
    }
}

/// A subcommand: its words (`store inspect`), its options and what runs it.
struct CommandSpec: Sendable {
    let path: [String]
    let summary: String
    var positionals: [(name: String, help: String)] = []
    let options: [OptionSpec]
    var discussion: String? = nil
    let run: @Sendable (ParsedCommand) async throws -> Int32

    var name: String { path.joined(separator: " ") }

    var usageLine: String {
        var parts = ["zonertc", name]
        parts += positionals.map { $0.name }
        for o in options {
            let text = o.value.map { "\(o.name) \($0)" } ?? o.name
            parts.append(o.defaultValue == nil && o.value != nil && isRequired(o) ? text : "[\(text)]")
        }
        return parts.joined(separator: " ")
    }

    func isRequired(_ o: OptionSpec) -> Bool { o.help.hasPrefix("(required)") }

    /// The full help text of this command.
    var help: String {
        var lines = ["usage: \(usageLine)", "", summary]
        if let discussion { lines += ["", discussion] }
        if !positionals.isEmpty {
            lines += ["", "arguments:"]
            for p in positionals { lines.append("  " + pad(p.name, 24) + p.help) }
        }
        if !options.isEmpty {
            lines += ["", "options:"]
            for o in options {
                let left = o.value.map { "\(o.name) \($0)" } ?? o.name
                var help = o.help
                if let d = o.defaultValue { help += " (default: \(d))" }
                lines.append("  " + pad(left, 24) + help)
            }
        }
        lines += ["", "global options: --log LEVEL[,json] (or ZONERTC_LOG), --help, --version"]
        return lines.joined(separator: "\n")
    }
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + "  " : s + String(repeating: " ", count: width - s.count)
}

/// A command line that did not parse: what was wrong, and for which command.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    var command: CommandSpec? = nil

    var description: String { message }
}

/// The options and arguments given to a command, checked against its spec.
struct ParsedCommand: Sendable {
    let spec: CommandSpec
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    func string(_ name: String) -> String? {
        values[name]?.last ?? spec.options.first { $0.name == name }?.defaultValue
    }

    func strings(_ name: String) -> [String] { values[name] ?? [] }

    func required(_ name: String) throws -> String {
        guard let v = string(name) else { throw UsageError(message: "\(name) is required", command: spec) }
        return v
    }

    func int<T: FixedWidthInteger>(_ name: String, in range: ClosedRange<T>) throws -> T? {
        guard let text = string(name) else { return nil }
        guard let v = T(text), range.contains(v) else {
            throw UsageError(message: "\(name) \(text): give a whole number from \(range.lowerBound) to \(range.upperBound)",
                             command: spec)
        }
        return v
    }

    func choice<E: RawRepresentable & CaseIterable>(_ name: String, as: E.Type) throws -> E? where E.RawValue == String {
        guard let text = string(name) else { return nil }
        guard let v = E(rawValue: text) else {
            let all = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(message: "\(name) \(text): choose one of \(all)", command: spec)
        }
        return v
    }
}

/// Parses `arguments` (after the command words) against `spec`.
func parse(_ arguments: [String], for spec: CommandSpec) throws -> ParsedCommand {
    var parsed = ParsedCommand(spec: spec)
    var i = 0
    var onlyPositionals = false
    while i < arguments.count {
        let arg = arguments[i]
        i += 1
        if onlyPositionals || !arg.hasPrefix("-") || arg == "-" {
            parsed.positionals.append(arg)
            continue
        }
        if arg == "--" { onlyPositionals = true; continue }
        var name = arg
        var inline: String?
        if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
            name = String(arg[..<eq])
            inline = String(arg[arg.index(after: eq)...])
        }
        guard let option = spec.options.first(where: { $0.name == name }) else {
            throw UsageError(message: "unknown option \(name) for '\(spec.name)'", command: spec)
        }
        if option.value == nil {
            if inline != nil { throw UsageError(message: "\(name) takes no value", command: spec) }
            parsed.flags.insert(name)
            continue
        }
        let value: String
        if let inline {
            value = inline
        } else {
            guard i < arguments.count else {
                throw UsageError(message: "\(name) needs a value (\(option.value!))", command: spec)
            }
            value = arguments[i]
            i += 1
        }
        if !option.repeatable, parsed.values[name] != nil {
            throw UsageError(message: "\(name) given more than once", command: spec)
        }
        parsed.values[name, default: []].append(value)
    }
    if parsed.positionals.count > spec.positionals.count {
        let extra = parsed.positionals[spec.positionals.count]
        throw UsageError(message: "unexpected argument '\(extra)' for '\(spec.name)'", command: spec)
    }
    for o in spec.options where spec.isRequired(o) && parsed.values[o.name] == nil {
        throw UsageError(message: "\(o.name) is required", command: spec)
    }
    return parsed
}
