import TestSupport
import Foundation
import Glibc
import Testing
import ZoneCore

/// aioice's TURN client (`aioice.turn.create_turn_endpoint`, the one aiortc uses) against
/// `zonertc relay serve`: Allocate after the 401 challenge, ChannelBind, ChannelData both ways
/// to a UDP echo, and the allocation deleted at close. The driver is Tests/Interop/aioice_turn_client.py.
@Suite("aioice's TURN client against zonertc relay serve", .serialized,
       .enabled(if: ExternalProgram.underCI || ExternalProgram.pythonHas("aioice"),
                "python3 with aioice is not installed (python3 -m pip install aioice)"))
struct AioiceTURNClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop/aioice_turn_client.py").path

    /// Runs the driver; its exit status and the JSON object it printed.
    func drive(_ relay: RelayProcess, password: String, count: Int) async throws -> (Int32?, [String: Any]) {
        let python = try ExternalProgram.require("python3", package: "python3")
        let run = try ChildProcess(python, [AioiceTURNClientTests.script, "127.0.0.1", "\(relay.port)", "u", password,
                                            "\(count)"])
        let status = try await offPool { run.wait(within: .seconds(90)) }
        if status == nil { run.kill(signal: SIGKILL, within: .seconds(5)) }
        #expect(status != 2, "aioice is missing: \(run.output)")
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        let json = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        return (status, json)
    }

    @Test("allocation and datagram round trips through the relay")
    func roundTrips() async throws {
        let relay = try RelayProcess()
        let (status, result) = try await drive(relay, password: "p", count: 50)
        let (relayStatus, log) = try await offPool { relay.stop() }
        #expect(status == 0, "aioice driver: \(result)")
        #expect(result["intact"] as? Int == 50, "\(result)")
        // The echo saw the datagrams come from the relayed address the relay handed out.
        let relayed = try Endpoint(parsing: result["relayed"] as? String ?? "")
        #expect(relay.relayPorts.contains(Int(relayed.port)))
        #expect(result["echo_saw"] as? [String] == ["\(relayed)"])
        #expect((result["mapped"] as? String)?.hasPrefix("127.0.0.1:") == true)
        #expect(relayStatus == 0)
        let counters = try #require(RelayCounters(lastIn: log))
        #expect(counters.made == 1 && counters.active == 0, "\(counters)")
        #expect(counters.toPeers == 50 && counters.toClients == 50, "\(counters)")
        #expect(log.contains("relay=\(relayed)") && log.contains("reason=\"refreshed with lifetime 0\""))
    }

    @Test("a wrong password: aioice reports 401, the relay allocates nothing")
    func wrongPassword() async throws {
        let relay = try RelayProcess()
        let (status, result) = try await drive(relay, password: "nope", count: 1)
        let (_, log) = try await offPool { relay.stop() }
        #expect(status == 1)
        #expect((result["error"] as? String)?.contains("401") == true, "\(result)")
        let counters = try #require(RelayCounters(lastIn: log))
        #expect(counters.made == 0 && counters.authFailures >= 1, "\(counters)")
    }
}
