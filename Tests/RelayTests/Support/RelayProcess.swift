import Foundation
import TestSupport
import Glibc
import Synchronization
import ZoneCore

/// `zonertc relay serve` as a child process, the way an operator runs it: listening on a free
/// port (it prints the one it got), relayed ports from a slice no other test uses, ended with
/// SIGTERM, its final counters read from what it prints.
final class RelayProcess: @unchecked Sendable {
    let child: ChildProcess
    let endpoint: Endpoint
    let relayPorts: ClosedRange<Int>

    /// The `zonertc` built beside this test bundle.
    static var binary: String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("zonertc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            dir = dir.deletingLastPathComponent()
        }
        return ".build/debug/zonertc"
    }

    /// Relayed ports are handed out in slices above the kernel's ephemeral range (32768–60999), so
    /// parallel tests neither share a relayed port nor collide with client sockets.
    private static let nextSlice = Atomic<Int>(0)

    static func portSlice(size: Int = 100) -> ClosedRange<Int> {
        let slices = (65535 - 61000 + 1) / size
        let n = nextSlice.add(1, ordering: .relaxed).oldValue % slices
        return (61000 + n * size)...(61000 + n * size + size - 1)
    }

    /// Starts the relay with users `u:p` (unless `arguments` give credentials), loopback peers
    /// allowed, and `arguments` appended.
    init(_ arguments: [String] = [], users: [String] = ["u:p"], realm: String = "r") throws {
        relayPorts = RelayProcess.portSlice()
        var args = ["relay", "serve", "--listen", "127.0.0.1:0", "--realm", realm, "--allow-loopback-peers",
                    "--min-port", "\(relayPorts.lowerBound)", "--max-port", "\(relayPorts.upperBound)", "--log", "info"]
        for u in users { args += ["--user", u] }
        child = try ChildProcess(RelayProcess.binary, args + arguments)
        let ready = #"listening on 127\.0\.0\.1:[0-9]+"#
        guard let line = child.waitForOutput(matching: ready, within: .seconds(20)) else {
            child.kill(signal: SIGKILL, within: .seconds(5))
            throw SpawnFailure("zonertc relay serve did not start: \(child.output) \(child.errorOutput)")
        }
        endpoint = try Endpoint(parsing: String(line.dropFirst("listening on ".count)))
    }

    var port: Int { Int(endpoint.port) }

    /// SIGTERM, then the exit status and everything it printed on stderr (logs and counters).
    func stop() -> (status: Int32, log: String) {
        let status = child.kill(signal: SIGTERM, within: .seconds(10))
        return (status, child.errorOutput)
    }

    deinit { child.kill(signal: SIGKILL, within: .seconds(5)) }
}

/// The counters of a `zonertc relay: …` line (the periodic one or the final summary).
struct RelayCounters: Equatable {
    var active = 0, made = 0, requests = 0, toPeers = 0, toClients = 0, dropped = 0, malformed = 0
    var authFailures = 0

    /// The last counters line in `log`, or nil.
    init?(lastIn log: String) {
        guard let line = log.split(separator: "\n").last(where: { $0.contains(" active / ") }) else { return nil }
        func number(_ pattern: String) -> Int {
            guard let r = line.range(of: pattern, options: .regularExpression) else { return -1 }
            return Int(line[r].split(separator: " ").compactMap { Int($0) }.first ?? -1)
        }
        active = number(#"allocations [0-9]+ active"#)
        made = Int(line.range(of: #"/ [0-9]+ made"#, options: .regularExpression)
            .map { line[$0].split(separator: " ")[1] } ?? "") ?? -1
        requests = number(#"requests [0-9]+"#)
        toPeers = number(#"to peers [0-9]+"#)
        toClients = number(#"to clients [0-9]+"#)
        dropped = number(#"dropped [0-9]+"#)
        malformed = number(#"malformed [0-9]+"#)
        authFailures = number(#"auth failures [0-9]+"#)
    }
}
