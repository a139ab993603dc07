import Foundation

/// A program run by a test, bounded in time: its output goes to temporary files that can be
/// read while it runs, waits have deadlines, and it is killed if still running when the test
/// lets go of it.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let stdoutURL: URL
    private let stderrURL: URL

    init(_ executable: URL, _ arguments: [String]) throws {
        let base = NSTemporaryDirectory() + "zonertc-child-\(UUID().uuidString)"
        stdoutURL = URL(fileURLWithPath: base + ".out")
        stderrURL = URL(fileURLWithPath: base + ".err")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// `zonertc` itself.
    static func zonertc(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(ZonertcProcess.binary, arguments)
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    /// Waits until stderr holds `text` (true), the process ends or `seconds` pass (false).
    func waitForStderr(_ text: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if stderr.contains(text) { return true }
            if !process.isRunning { return stderr.contains(text) }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    /// Waits for the exit status; nil (and the process killed) if `seconds` pass first.
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard !process.isRunning else {
            kill()
            return nil
        }
        return process.terminationStatus
    }

    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: stdoutURL)
        try? FileManager.default.removeItem(at: stderrURL)
    }
}

/// Programs the tests compare ZoneRTC with. Under ZONERTC_CI=1 a missing one fails the test
/// that needs it; otherwise that test is skipped.
enum ExternalProgram: String {
    case ffmpeg

    /// The program's path, if installed.
    var path: String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(rawValue)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var required: Bool { ProcessInfo.processInfo.environment["ZONERTC_CI"] == "1" }

    /// Whether tests that need it run: when it is installed, or when CI requires it.
    var shouldTest: Bool { path != nil || Self.required }
}

/// A loopback UDP port P with P+1 free too at the time of asking (for RTP and RTCP).
func freeUDPPortPair() -> UInt16 {
    for _ in 0..<100 {
        let first = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(first) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(first, $0, length) }
        }
        guard bound == 0 else { continue }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(first, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        guard port < 65000, port % 2 == 0 else { continue }
        let second = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(second) }
        address.sin_port = (port + 1).bigEndian
        let secondBound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(second, $0, length) }
        }
        if secondBound == 0 { return port }
    }
    return 47_000
}

/// Sends one UDP datagram to 127.0.0.1:`port`.
func sendUDP(_ bytes: [UInt8], toPort port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    _ = bytes.withUnsafeBytes { raw in
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}

/// Whether some process has a UDP socket bound to `port` (from /proc/net/udp and udp6).
func udpPortIsBound(_ port: UInt16) -> Bool {
    let suffix = String(format: ":%04X", port)
    for table in ["/proc/net/udp", "/proc/net/udp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count > 1 && fields[1].hasSuffix(suffix) { return true }
        }
    }
    return false
}
