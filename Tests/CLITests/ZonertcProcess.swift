import Foundation
import Testing
import TestSupport

/// Runs the built `zonertc` binary and captures what it prints.
struct ZonertcProcess {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

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

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // A signal's number is not an exit code (SIGINT's 2 would read as a usage error): 128 + it.
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus
            : process.terminationStatus
        let output = Output(status: status, stdout: String(decoding: stdout, as: UTF8.self),
                            stderr: String(decoding: stderr, as: UTF8.self))
        if let crash = ChildCrash.report(status: status, stderr: output.stderr) {
            Issue.record("zonertc \(arguments.prefix(2).joined(separator: " ")) crashed: \(crash)")
        }
        return output
    }
}
