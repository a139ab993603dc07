import TestSupport
import Foundation
import Glibc
import Net
import Testing
import ZoneCore

/// coturn's own clients (`turnutils_uclient`, `turnutils_stunclient`) against `zonertc relay
/// serve` run as a process: they must accept every answer we give and lose nothing at a modest
/// rate. The echo is coturn's `turnutils_peer`. Serialized: the uclient runs load both cores.
@Suite("coturn's clients against zonertc relay serve", .serialized,
       .enabled(if: ExternalProgram.runnable("turnutils_uclient", "turnutils_peer", "turnutils_stunclient"),
                "coturn's turnutils_* are not installed (apt-get install coturn)"))
struct CoturnClientsTests {
    /// The uclient modes the issue names, each with 10 clients × 1000 messages of 1000 bytes, 1 ms apart.
    /// Without `-c` each client also makes an RTCP allocation through EVEN-PORT and RESERVATION-TOKEN.
    /// The last case runs the relay with `--no-gso` (datagram by datagram instead of UDP_SEGMENT runs).
    static let modes: [[String]] = [["-c"], ["-c", "-s"], ["-c", "-y"], ["-c", "-X"], ["-c", "-g"], [],
                                    ["-c", "--no-gso"]]

    /// What one mode's run came to.
    struct UclientRun: Sendable {
        let flags: [String]
        let status: Int32?
        let clientDrops: Int
        let output: String
        let relayStatus: Int32
        let log: String
    }

    /// Every mode at once, each with a relay and an echo of its own: a uclient run spends about 3 of its 7 s
    /// waiting before it sends (measured here: 100 messages a client take as long as 1000), so seven one after
    /// the other took 54 s and together take about 9. Paced at 1 ms, the seven together are about 14,000
    /// datagrams a second each way through the relays; any the kernel drops at uclient's sockets are counted
    /// and must be all it missed, as before.
    @Test("turnutils_uclient: the relay loses nothing, in every mode")
    func uclientLosesNothing() async throws {
        let uclient = try ExternalProgram.require("turnutils_uclient", package: "coturn")
        let runs = try await withThrowingTaskGroup(of: UclientRun.self) { group in
            for modeFlags in Self.modes {
                group.addTask { try await Self.run(uclient, modeFlags) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.count == Self.modes.count)
        for run in runs { Self.expectNothingLost(run) }
    }

    /// One uclient run in `modeFlags` against a relay and an echo of its own.
    static func run(_ uclient: String, _ modeFlags: [String]) async throws -> UclientRun {
        let flags = modeFlags.filter { $0 != "--no-gso" }
        let relay = try RelayProcess(modeFlags.contains("--no-gso") ? ["--no-gso"] : [])
        let echo = try EchoPeer()
        let run = try ChildProcess(uclient, ["-u", "u", "-w", "p", "-p", "\(relay.port)", "-e", "127.0.0.1",
                                             "-r", "\(echo.port)"] + flags
                                             + ["-m", "10", "-n", "1000", "-l", "1000", "-z", "1", "127.0.0.1"])
        // The kernel's drop counts of uclient's sockets, read while it runs (it closes them at the end).
        let (status, clientDrops) = try await offPool { () -> (Int32?, Int) in
            var drops = SocketDrops()
            let end = ContinuousClock.now + .seconds(90)
            while true {
                drops.sample(run.pid)
                if let status = run.wait(within: .milliseconds(100)) { return (status, drops.total) }
                if ContinuousClock.now >= end { return (run.wait(within: .zero), drops.total) }
            }
        }
        let (relayStatus, log) = try await offPool { relay.stop() }
        withExtendedLifetime(echo) {}
        return UclientRun(flags: modeFlags, status: status, clientDrops: clientDrops,
                          output: run.output + run.errorOutput, relayStatus: relayStatus, log: log)
    }

    static func expectNothingLost(_ run: UclientRun) {
        let flags = run.flags
        let output = run.output
        let loss = UclientReport(output)
        #expect(run.status == 0,
                "turnutils_uclient \(flags) exited \(String(describing: run.status)): \(output.suffix(800))")
        #expect(loss?.sent == 10_000, "\(flags): \(String(describing: loss))")
        // Whatever uclient missed, the kernel dropped at uclient's own full receive buffers, nowhere
        // else (the relay's counters below show it forwarded every datagram both ways). Under load it
        // happens: coturn's client fixes its buffers at 64 KB (128 KB granted, about 55 of these
        // datagrams: 55 ms of one client's traffic), and a client descheduled longer by other work on
        // the machine overflows them (seen at load average 20: 10 to 602 of 10,000, each one counted
        // at uclient's sockets, none at the relay's or the echo's).
        let dropped = "\(run.clientDrops) dropped at its sockets"
        #expect(loss?.lost == run.clientDrops,
                "turnutils_uclient \(flags): \(loss?.line ?? "no loss line"), \(dropped); \(output.suffix(800))")
        // The relay saw it all: every allocation made, logged, and released by the client at the end.
        let log = run.log
        #expect(run.relayStatus == 0, "\(flags)")
        guard let counters = RelayCounters(lastIn: log) else {
            Issue.record("\(flags): no counters in \(log.suffix(500))")
            return
        }
        // uclient makes more allocations than clients (it keeps a first one it never uses); each is
        // logged when made and when released (by the client's Refresh 0, or by our SIGTERM).
        #expect(counters.made >= 10 && counters.active == 0 && counters.authFailures == 0, "\(flags): \(counters)")
        #expect(counters.toPeers == 10_000 && counters.toClients == 10_000 && counters.dropped == 0,
                "\(flags): \(counters)")
        #expect(log.components(separatedBy: "relay: allocation client=").count - 1 == counters.made, "\(flags)")
        #expect(log.components(separatedBy: "relay: allocation released").count - 1 == counters.made, "\(flags)")
        #expect(log.contains("reason=\"refreshed with lifetime 0\""), "\(flags)")
    }

    @Test("a wrong password gets 401 and no allocation")
    func wrongPassword() async throws {
        let uclient = try ExternalProgram.require("turnutils_uclient", package: "coturn")
        let relay = try RelayProcess(["--log", "debug"])
        let echo = try EchoPeer()
        let run = try ChildProcess(uclient, ["-u", "u", "-w", "wrong", "-p", "\(relay.port)", "-e", "127.0.0.1",
                                             "-r", "\(echo.port)", "-c", "-m", "2", "-n", "10", "-z", "1",
                                             "127.0.0.1"])
        let status = try await offPool { run.wait(within: .seconds(30)) }
        let (_, log) = try await offPool { relay.stop() }
        #expect(status != nil && status != 0)
        #expect((run.output + run.errorOutput).contains("Cannot complete Allocation"))
        let counters = try #require(RelayCounters(lastIn: log))
        #expect(counters.made == 0 && counters.active == 0 && counters.toPeers == 0, "\(counters)")
        #expect(counters.authFailures >= 2, "\(counters)")
        #expect(!log.contains("relay: allocation client="))
    }

    @Test("turnutils_stunclient gets the address the relay saw")
    func stunclientMappedAddress() async throws {
        let stunclient = try ExternalProgram.require("turnutils_stunclient", package: "coturn")
        let relay = try RelayProcess(["--log", "debug"])
        let run = try ChildProcess(stunclient, ["-p", "\(relay.port)", "127.0.0.1"])
        let status = try await offPool { run.wait(within: .seconds(20)) }
        let (_, log) = try await offPool { relay.stop() }
        #expect(status == 0)
        let printed = run.output + run.errorOutput
        let range = try #require(printed.range(of: #"reflexive addr: [0-9.]+:[0-9]+"#, options: .regularExpression),
                                 "stunclient said: \(printed)")
        let mapped = try Endpoint(parsing: String(printed[range].dropFirst("reflexive addr: ".count)))
        // The relay logs the source of each Binding request; coturn decoded the same address from
        // our XOR-MAPPED-ADDRESS.
        #expect(mapped.address == .loopbackV4)
        #expect(log.contains("binding client=\(mapped)"), "relay log: \(log.suffix(600))")
    }
}

/// coturn's `turnutils_peer` echoing UDP on a free loopback port, killed at the end.
final class EchoPeer: @unchecked Sendable {
    let child: ChildProcess
    let port: Int

    init() throws {
        let program = try ExternalProgram.require("turnutils_peer", package: "coturn")
        var lastError = ""
        for _ in 0..<5 {
            let port = try EchoPeer.freePort()
            let child = try ChildProcess(program, ["-L", "127.0.0.1", "-p", "\(port)"])
            if EchoPeer.answers(port: port) {
                self.child = child
                self.port = port
                return
            }
            child.kill(signal: SIGKILL, within: .seconds(5))
            lastError = child.output + child.errorOutput
        }
        throw SpawnFailure("turnutils_peer never echoed: \(lastError)")
    }

    deinit { child.kill(signal: SIGKILL, within: .seconds(5)) }

    /// A UDP port the kernel just handed out on loopback (free a moment ago).
    static func freePort() throws -> Int {
        Int(try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0")).localEndpoint.port)
    }

    /// Whether something echoes a probe on `port` within about 2 s.
    static func answers(port: Int) -> Bool {
        guard let probe = try? UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0")),
              let target = try? Endpoint(parsing: "127.0.0.1:\(port)") else { return false }
        for _ in 0..<20 {
            probe.send(Array("probe".utf8), to: target)
            if let (bytes, _) = probe.receive(timeoutMilliseconds: 100), bytes == Array("probe".utf8) { return true }
        }
        return false
    }
}

/// The datagrams the kernel dropped at a process's UDP sockets because their receive buffers were
/// full: the `drops` column of /proc/net/udp{,6} for the socket inodes in /proc/PID/fd. Counters only
/// grow, so the highest value seen per socket is kept across samples (sockets close at the end).
struct SocketDrops {
    private var bySocket: [Substring: Int] = [:]

    var total: Int { bySocket.values.reduce(0, +) }

    mutating func sample(_ pid: pid_t) {
        let directory = "/proc/\(pid)/fd"
        let inodes = Set(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)"))
                .flatMap { $0.hasPrefix("socket:[") ? $0.dropFirst(8).dropLast() : nil }
        })
        guard !inodes.isEmpty else { return }
        for table in ["/proc/net/udp", "/proc/net/udp6"] {
            let text = readProcFile(table) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 12, inodes.contains(fields[9]), let drops = Int(fields[fields.count - 1])
                else { continue }
                bySocket[fields[9]] = max(bySocket[fields[9]] ?? 0, drops)
            }
        }
    }
}

/// The closing lines of a `turnutils_uclient` run.
struct UclientReport: CustomStringConvertible {
    var line: String
    var lost: Int
    var sent: Int
    var received: Int

    /// Parses `Total lost packets N (x%)` and `tot_send_msgs=S, tot_recv_msgs=R`.
    init?(_ output: String) {
        guard let lossRange = output.range(of: #"Total lost packets [0-9]+ \("#, options: .regularExpression),
              let lost = Int(output[lossRange].split(separator: " ")[3]) else { return nil }
        let end = output[lossRange.lowerBound...].firstIndex(of: "\n") ?? output.endIndex
        line = String(output[lossRange.lowerBound..<end])
        self.lost = lost
        let totals = output.split(separator: "\n").last {
            $0.contains("tot_send_msgs=") && $0.contains("tot_recv_msgs=")
        }
        func value(_ key: String) -> Int {
            guard let t = totals, let r = t.range(of: key + "[0-9]+", options: .regularExpression) else { return -1 }
            return Int(t[r].dropFirst(key.count)) ?? -1
        }
        sent = value("tot_send_msgs=")
        received = value("tot_recv_msgs=")
    }

    var description: String { "\(line); sent \(sent), received \(received)" }
}
