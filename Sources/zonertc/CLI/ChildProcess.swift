import Foundation
import Glibc

/// A child process whose output goes to files, waited for without blocking a thread.
final class ChildProcess: @unchecked Sendable {
    let name: String
    let process = Process()
    let stdoutPath: String
    let stderrPath: String
    private let exited = NSCondition()
    private var status: Int32?
    /// The write end of its standard input, when it was started with one (`input: true`).
    private let input: Pipe?

    /// The running `zonertc` binary.
    static var zonertc: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// `input`: give it a pipe for standard input (`send(line:)`) instead of /dev/null.
    init(name: String, executable: String = ChildProcess.zonertc, arguments: [String], directory: String,
         input: Bool = false) throws {
        self.name = name
        self.input = input ? Pipe() : nil
        stdoutPath = "\(directory)/\(name).out"
        stderrPath = "\(directory)/\(name).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardInput = self.input ?? FileHandle.nullDevice
        process.terminationHandler = { [weak self] p in
            guard let self else { return }
            self.exited.lock()
            self.status = p.terminationStatus
            self.exited.broadcast()
            self.exited.unlock()
        }
        try process.run()
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Waits (on a thread of its own) until the process exits or `timeout` passes; nil on timeout.
    func wait(timeout: Duration) async -> Int32? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in
                let deadline = Date().addingTimeInterval(Double(timeout.components.seconds)
                                                         + Double(timeout.components.attoseconds) / 1e18)
                exited.lock()
                while status == nil, exited.wait(until: deadline) {}
                let result = status
                exited.unlock()
                continuation.resume(returning: result)
            }
        }
    }

    /// The URL a `zonertc store serve` child prints once it listens (`http://127.0.0.1:PORT`), or nil
    /// when it has not within 10 s.
    func storeURL() async -> String? {
        guard let line = await waitForLine(containing: "listening on", timeout: .seconds(10)) else { return nil }
        return line.split(separator: " ").first(where: { $0.hasPrefix("http://") }).map(String.init)
    }

    /// Polls the stdout file until a line contains `marker` (or the process exits, or time is up).
    func waitForLine(containing marker: String, timeout: Duration) async -> String? {
        await firstLine(containing: marker, of: { $0.stdout }, timeout: timeout)
    }

    /// Writes `line` and a newline to its standard input, then closes it (nothing more is sent).
    func send(line: String) {
        guard let input, process.isRunning else { return }
        _ = Self.pipeSignalIgnored
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        try? input.fileHandleForWriting.close()
    }

    /// Polls the stderr file until a line contains `marker`; false when the process exits or time is up first.
    func waitForErrorLine(containing marker: String, timeout: Duration) async -> Bool {
        await firstLine(containing: marker, of: { $0.stderr }, timeout: timeout) != nil
    }

    /// Polls one of its output files (`output`) every 2 ms for the first line containing `marker`; nil when
    /// the process exits or `timeout` passes first.
    private func firstLine(containing marker: String, of output: (ChildProcess) -> String,
                           timeout: Duration) async -> String? {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if let line = output(self).split(separator: "\n").first(where: { $0.contains(marker) }) { return String(line) }
            if !process.isRunning { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// A child that exits just as a line is written to its standard input must not take this process with
    /// it: with SIGPIPE ignored (once, for the process) the write fails with EPIPE instead.
    private static let pipeSignalIgnored: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    func signal(_ sig: Int32) {
        if process.isRunning { kill(process.processIdentifier, sig) }
    }

    /// SIGTERM, then SIGKILL if it is still there after `grace`.
    func stop(grace: Duration = .seconds(3)) async {
        guard process.isRunning else { return }
        signal(SIGTERM)
        if await wait(timeout: grace) == nil {
            signal(SIGKILL)
            _ = await wait(timeout: .seconds(2))
        }
    }
}
