import Foundation
import Testing
import TestSupport

/// A program run by a test, bounded in time: its output collected from pipes and readable while
/// it runs, waits woken by its output and its exit (with deadlines, never by a timer), and killed
/// if still running when the test lets go of it.
final class ChildProcess: @unchecked Sendable {
    private let watch: ProcessWatch
    private let name: String

    init(_ executable: URL, _ arguments: [String]) throws {
        name = executable.lastPathComponent + (arguments.first.map { " " + $0 } ?? "")
        watch = try spawnWatched([executable.path] + arguments)
    }

    /// `zonertc` itself.
    static func zonertc(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(ZonertcProcess.binary, arguments)
    }

    var stdout: String { watch.stdout }
    var stderr: String { watch.stderr }
    var isRunning: Bool { watch.exitStatus == nil }

    /// Waits until stderr holds `text` (true), the process ends or `seconds` pass (false).
    func waitForStderr(_ text: String, seconds: Double) -> Bool {
        watch.wait(within: .milliseconds(Int64(seconds * 1000))) { $0.stderr.contains(text) }
    }

    /// Waits for the exit status; nil (and the process killed) if `seconds` pass first. A crash
    /// (`ChildCrash`) is a test failure whatever the status is compared with.
    func wait(seconds: Double) -> Int32? {
        guard let status = watch.wait(within: .milliseconds(Int64(seconds * 1000))) else {
            kill()
            return nil
        }
        if let crash = watch.crashReport { Issue.record("\(name) crashed: \(crash)") }
        return status
    }

    /// Waits up to `seconds` until `predicate` holds, checked whenever the child prints or exits.
    func waitUntil(within seconds: Double, _ predicate: (ProcessWatch) -> Bool) -> Bool {
        watch.wait(within: .milliseconds(Int64(seconds * 1000)), until: predicate)
    }

    /// Ctrl-C, as a user at the terminal would stop it (the caller waits for the exit).
    func interrupt() {
        guard isRunning else { return }
        Glibc.kill(watch.pid, SIGINT)
    }

    func kill() {
        guard isRunning else { return }
        Glibc.kill(watch.pid, SIGKILL)
        _ = watch.wait(within: .seconds(5))
    }

    deinit { kill() }
}

/// An even UDP port whose successor is free too (RTCP goes to PORT+1), and that a TCP daemon could
/// listen on as well: the documented blocks put daemons on these ports, and a port with a TCP socket on it
/// (a daemon left by an earlier run, a client's ephemeral port) is not free.
func freeUDPPortPair() -> UInt16 {
    for _ in 0..<100 {
        let first = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(first) }
        guard bindLoopback(first, port: 0) else { continue }
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(first, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        guard port < 65000, port % 2 == 0 else { continue }
        if portIsFree(port + 1, type: SOCK_DGRAM) && portIsFree(port, type: SOCK_STREAM) { return port }
    }
    return 47_000
}

/// 127.0.0.1:`port` as a socket address.
private func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return address
}

/// Binds `fd` to 127.0.0.1:`port` (0: any free port); whether the kernel took it.
private func bindLoopback(_ fd: Int32, port: UInt16) -> Bool {
    var address = loopbackAddress(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// Whether a socket of `type` can bind 127.0.0.1:`port` (without SO_REUSEADDR: a socket still on it says no).
private func portIsFree(_ port: UInt16, type: __socket_type) -> Bool {
    let fd = socket(AF_INET, Int32(type.rawValue), 0)
    defer { close(fd) }
    return bindLoopback(fd, port: port)
}

/// Sends one UDP datagram to 127.0.0.1:`port`.
func sendUDP(_ bytes: [UInt8], toPort port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var address = loopbackAddress(port: port)
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
        guard let text = readProcFile(table) else { continue }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count > 1 && fields[1].hasSuffix(suffix) { return true }
        }
    }
    return false
}
