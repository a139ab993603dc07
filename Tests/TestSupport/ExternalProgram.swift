import Foundation
import Synchronization

/// Third-party programs the tests run (ffmpeg, coturn's tools, python3 with aioice, iperf3).
///
/// Without `ZONERTC_CI=1` a test whose program is missing is skipped, with the reason shown;
/// with it (`.ci/run` sets it after installing them) the test runs and fails, so CI never
/// passes by silently testing nothing.
public enum ExternalProgram {
    public static var underCI: Bool { ProcessInfo.processInfo.environment["ZONERTC_CI"] == "1" }

    /// The full path of `name` in PATH, or nil.
    public static func path(_ name: String) -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for dir in dirs {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Whether a test needing `names` should run: they are all installed, or this is CI.
    public static func runnable(_ names: String...) -> Bool {
        underCI || names.allSatisfy { path($0) != nil }
    }

    /// Whether python3 can import `module`, asked once per module in a test run: importing aiortc takes python
    /// 1.3 s, and a dozen tests ask.
    public static func pythonHas(_ module: String) -> Bool {
        if let known = importable.withLock({ $0[module] }) { return known }
        let found: Bool
        if let python = path("python3"), let child = try? spawnWatched([python, "-c", "import \(module)"]) {
            found = child.wait(within: .seconds(20)) == 0
        } else {
            found = false
        }
        importable.withLock { $0[module] = found }
        return found
    }

    /// What `pythonHas` found, by module.
    private static let importable = Mutex<[String: Bool]>([:])

    /// The path of `name`, or an error that says what to install.
    public static func require(_ name: String, package: String) throws -> String {
        guard let found = path(name) else {
            throw SpawnFailure("\(name) is not installed (apt-get install \(package)); .ci/run installs it")
        }
        return found
    }
}
