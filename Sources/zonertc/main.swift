// zonertc: the ZoneRTC command-line tool. Only parsing and wiring live here.
import Foundation
import Peer
import ZoneCore

let version = "zonertc 0.1.0"

/// Every working command. Only commands that work are listed.
let commands: [CommandSpec] = [
    StoreServeCommand.spec,
    StoreUserAddCommand.spec,
    StoreInspectCommand.spec,
    StoreRepairCommand.spec,
    RelayServeCommand.spec,
    PeerCommand.spec,
    CallCommand.spec,
    MediaSendCommand.spec,
    MediaReceiveCommand.spec,
    BenchSignalingCommand.spec,
    BenchCallCommand.spec,
    BenchLoadCommand.spec,
    SimConvergeCommand.spec,
]

let overview = """
    ZoneRTC: design and test WebRTC calls signaled through a shared record store.

    usage: zonertc <command> [options]

    commands:
    \(commands.map { "  " + pad($0.name, 18) + $0.summary }.joined(separator: "\n"))

    global options:
      --log LEVEL[,json]  trace, debug, info, notice, warning, error; ",json" for JSON lines (or ZONERTC_LOG)
      --help, -h          this text; `zonertc help <command>` for a command's options
                          (`zonertc help --markdown`: every command's, as docs/CLI.md has them)
      --version           print the version

    exit codes: 0 success, 1 the command failed, 2 the command line was wrong.
    """

func usageFailure(_ message: String, _ command: CommandSpec?) -> Int32 {
    Terminal.error("zonertc: \(message)")
    if let command {
        Terminal.error("usage: \(command.usageLine)\n(see `zonertc help \(command.name)`)")
    } else {
        Terminal.error("(see `zonertc --help`)")
    }
    return 2
}

/// Finds the longest command whose words start the argument list.
func match(_ words: [String]) -> (CommandSpec, Int)? {
    commands
        .filter { words.starts(with: $0.path) }
        .max { $0.path.count < $1.path.count }
        .map { ($0, $0.path.count) }
}

func runMain() async -> Int32 {
    var args = Array(CommandLine.arguments.dropFirst())
    // Global options, wherever they stand.
    var logSetting: String?
    var i = 0
    while i < args.count {
        if args[i] == "--log" {
            guard i + 1 < args.count else { return usageFailure("--log needs a value (LEVEL[,json])", nil) }
            logSetting = args[i + 1]
            args.removeSubrange(i...(i + 1))
        } else if args[i].hasPrefix("--log=") {
            logSetting = String(args[i].dropFirst(6))
            args.remove(at: i)
        } else {
            i += 1
        }
    }
    do {
        let configuration = try LogConfiguration.resolve(flag: logSetting)
        LogSystem.shared.configure(configuration)
    } catch {
        return usageFailure("\(error)", nil)
    }
    if args.isEmpty {
        Terminal.error(overview)
        return 2
    }
    if args == ["--version"] || args == ["version"] {
        print(version)
        return 0
    }
    if args[0] == "--help" || args[0] == "-h" {
        print(overview)
        return 0
    }
    if args[0] == "help" {
        let words = Array(args.dropFirst())
        if words.isEmpty { print(overview); return 0 }
        if words == ["--markdown"] {
            print(CLIReference.markdown(commands), terminator: "")
            return 0
        }
        guard let (command, used) = match(words), used == words.count else {
            return usageFailure("no command '\(words.joined(separator: " "))'", nil)
        }
        print(command.help)
        return 0
    }
    guard let (command, used) = match(args) else {
        let prefix = commands.filter { $0.path.first == args[0] }
        if !prefix.isEmpty {
            let names = prefix.map { $0.name }.joined(separator: ", ")
            return usageFailure("unknown command '\(args.prefix(2).joined(separator: " "))'; try: \(names)", nil)
        }
        return usageFailure("unknown command '\(args[0])'", nil)
    }
    let rest = Array(args.dropFirst(used))
    if rest.contains("--help") || rest.contains("-h") {
        print(command.help)
        return 0
    }
    do {
        let parsed = try parse(rest, for: command)
        return try await command.run(parsed)
    } catch let error as UsageError {
        return usageFailure(error.message, error.command ?? command)
    } catch {
        Terminal.error("zonertc \(command.name): \(error)")
        return 1
    }
}

let status = await runMain()
// A DTLS warm-up thread may still run when a command fails early; let it finish before exit.
await MediaProtectionMode.warmUpSettled()
// Log lines still queued go out first, unless the reader has stopped reading.
QueuedLogOutput.standardError.flush(within: .seconds(1))
exit(status)
