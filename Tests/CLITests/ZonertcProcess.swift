import Foundation
import Glibc
import Testing
import TestSupport

/// Runs the built `zonertc` binary and captures what it prints, bounded in time.
struct ZonertcProcess {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A run that outlived its limit: the child was killed by its PID; what it printed until then.
    struct Timeout: Error, CustomStringConvertible {
        var arguments: [String]
        var limit: Duration
        var pid: pid_t
        var stdout: String
        var stderr: String

        var description: String {
            "zonertc \(arguments.joined(separator: " ")) did not end within \(limit) and was killed (PID \(pid)); "
                + "stdout so far:\n\(stdout.suffix(3000))\nstderr so far:\n\(stderr.suffix(3000))"
        }
    }

    /// How long `run` waits unless told otherwise: far beyond any command the tests run this way.
    static let defaultLimit = Duration.seconds(120)

    /// The `zonertc` built beside this test bundle.
    static var binary: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("zonertc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/zonertc")
    }

    /// Runs `zonertc arguments` to its end, within `limit`: a child still running then is killed by its
    /// PID and the run throws `Timeout` with what it printed, instead of hanging the suite.
    static func run(_ arguments: [String], environment: [String: String] = [:],
                    limit: Duration = defaultLimit) throws -> Output {
        let child = try spawnWatched([binary.path] + arguments, environment: environment)
        guard let status = child.wait(within: limit) else {
            kill(child.pid, SIGKILL)
            _ = child.wait(within: .seconds(10))
            throw Timeout(arguments: arguments, limit: limit, pid: child.pid, stdout: child.stdout,
                          stderr: child.stderr)
        }
        let output = Output(status: status, stdout: child.stdout, stderr: child.stderr)
        if let crash = ChildCrash.report(status: status, stderr: output.stderr) {
            Issue.record("zonertc \(arguments.prefix(2).joined(separator: " ")) crashed: \(crash)")
        }
        return output
    }
}
