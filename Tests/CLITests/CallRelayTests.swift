// `zonertc call --turn USER:PASS@HOST:PORT`: the user's own TURN relay (coturn here) carries the
// call instead of one the command starts; bad relay arguments are usage errors.

import Foundation
import Testing
import TestSupport

@Suite("zonertc call --turn", .serialized)
struct CallRelayTests {
    struct Report: Decodable {
        struct Verdict: Decodable { var ok: Bool; var text: String }
        struct Media: Decodable { var framesSent: Int; var framesReceived: Int }
        struct Summary: Decodable {
            var path: String?
            var localCandidate: String?
            var media: Media?
        }
        var alice: Summary?
        var bob: Summary?
        var verdict: Verdict
    }

    @Test("bad --turn arguments exit 2 and say what is wrong", arguments: [
        ("u:p@127.0.0.1", "--turn: the server '127.0.0.1' is not IPV4:PORT or [IPV6]:PORT"),
        ("u:p@127.0.0.1:70000", "is not IPV4:PORT or [IPV6]:PORT"),
        ("u:p@::1:3478", "is not IPV4:PORT or [IPV6]:PORT"),
        ("u@127.0.0.1:3478", "--turn: the password is missing"),
        ("u:@[::1]:3478", "--turn: the password is empty"),
        ("u:p@127.0.0.1:0", "must be 1–65535"),
    ])
    func badTURNArguments(text: String, message: String) throws {
        let file = CallProcessTests.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let run = try ZonertcProcess.run(["call", file, "--turn", text, "--relay-only"])
        #expect(run.status == 2)
        #expect(run.stderr.contains(message), "stderr: \(run.stderr)")
    }

    /// coturn on a free loopback port with the flags of docs/INTEROP.md (loopback only, one relay thread,
    /// long-term credentials u:p, UDP only), once it says it is up; its data in `directory`. Stop it by its PID.
    private func startCoturn(in directory: String) throws -> (process: ChildProcess, port: UInt16,
                                                               relayPorts: ClosedRange<Int>) {
        let turnserver = try ExternalProgram.require("turnserver", package: "coturn")
        let port = freeUDPPortPair()
        let base = 50_000 + Int.random(in: 0..<140) * 100
        let relayPorts = base...(base + 99)
        let coturn = try ChildProcess(URL(fileURLWithPath: turnserver), [
            "-n", "--log-file=stdout", "--simple-log", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1",
            "--listening-port=\(port)", "--min-port=\(relayPorts.lowerBound)", "--max-port=\(relayPorts.upperBound)",
            "-m", "1", "--lt-cred-mech", "--user=u:p", "--realm=r", "--fingerprint", "--no-tls", "--no-dtls",
            "--no-tcp", "--no-tcp-relay", "--no-cli", "--allow-loopback-peers", "--db=\(directory)/turndb",
            "--pidfile=\(directory)/turnserver.pid",
        ])
        // coturn prints this once its listeners and relay threads are up; a request that still
        // came too early is retransmitted by the peers' TURN client.
        let up = coturn.waitUntil(within: 10) { ($0.stdout + $0.stderr).contains("Total General servers") }
        guard up && coturn.isRunning else {
            coturn.kill()
            throw CocoaError(.executableLoad, userInfo: [
                NSLocalizedDescriptionKey: "turnserver did not start: \(coturn.stdout.suffix(2000))"])
        }
        return (coturn, port, relayPorts)
    }

    private func temporaryDirectory(_ name: String) throws -> String {
        let directory = NSTemporaryDirectory() + "\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("--turn coturn --relay-only: identical frames, both peers relayed through coturn",
          .enabled(if: ExternalProgram.runnable("turnserver"), "coturn is not installed (ZONERTC_CI=1 fails instead)"))
    func throughCoturn() throws {
        let directory = try temporaryDirectory("zonertc-call-coturn")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (coturn, port, relayPorts) = try startCoturn(in: directory)
        defer { coturn.kill() }

        let file = CallProcessTests.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path
        let run = try ZonertcProcess.run(["call", file, "--turn", "u:p@127.0.0.1:\(port)", "--relay-only",
                                          "--pace", "max", "--json", "--timeout", "30s"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let line = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = try #require(try? JSONDecoder().decode(Report.self, from: Data(line.utf8)),
                                  "stdout: \(run.stdout)")
        #expect(report.verdict.ok, "\(report.verdict.text)")
        #expect(report.bob?.media?.framesReceived == 60 && report.alice?.media?.framesSent == 60)
        for summary in [report.alice, report.bob] {
            #expect(summary?.path == "relay")
            // The relayed address is one of coturn's relay ports: no relay of ours was involved.
            let local = summary?.localCandidate ?? ""
            let relayPort = local.split(separator: ":").last.flatMap { Int($0) }
            #expect(local.hasPrefix("relay 127.0.0.1:") && relayPort.map(relayPorts.contains) == true,
                    "local candidate \(local), coturn relays on \(relayPorts)")
        }
        #expect(coturn.isRunning, "turnserver ended during the call: \(coturn.stdout.suffix(2000))")
    }

    @Test("--peers 3 --turn coturn --relay-only: a group call, each leg relayed through coturn, all identical",
          .enabled(if: ExternalProgram.runnable("turnserver"), "coturn is not installed (ZONERTC_CI=1 fails instead)"))
    func groupCallThroughCoturn() throws {
        let directory = try temporaryDirectory("zonertc-mesh-coturn")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (coturn, port, _) = try startCoturn(in: directory)
        defer { coturn.kill() }

        let file = CallProcessTests.fixtures.appendingPathComponent("testsrc-32x24-5.y4m").path
        let run = try ZonertcProcess.run(["call", file, "--peers", "3", "--turn", "u:p@127.0.0.1:\(port)",
                                          "--relay-only", "--pace", "max", "--json", "--timeout", "30s"])
        try RelayedGroupCallReport.expect(run, peers: 3, frames: 5)
        #expect(coturn.isRunning, "turnserver ended during the call: \(coturn.stdout.suffix(2000))")
    }
}
