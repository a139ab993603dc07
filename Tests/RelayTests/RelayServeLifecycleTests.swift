import TestSupport
import Foundation
import Glibc
import Net
import Testing
import ZoneCore

/// `zonertc relay serve` as an operator sees it: periodic counters, allocations in the log, and
/// SIGTERM ending every allocation (relayed ports closed) with a final summary and exit 0.
@Suite("zonertc relay serve: counters, logs, SIGTERM")
struct RelayServeLifecycleTests {
    @Test("periodic counters; SIGTERM ends every allocation, frees the relayed ports, prints a summary")
    func statsAndShutdown() async throws {
        let relay = try RelayProcess(["--stats-interval", "100ms"])
        let server = relay.endpoint
        // Three allocations from three clients, one of them relaying a datagram to a peer.
        let (relayed, clients) = try await offPool { () throws -> ([Endpoint], [String]) in
            var relayed: [Endpoint] = []
            var clients: [String] = []
            let peer = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
            for seed in 1...3 {
                let c = try RawTURNClient(server: server, seed: UInt64(seed))
                relayed.append(try c.allocate().get())
                clients.append("\(c.socket.localEndpoint)")
                if seed == 1 {
                    _ = c.permit(peer.localEndpoint)
                    _ = c.bind(channel: 0x4000, to: peer.localEndpoint)
                    c.socket.send([0x40, 0x00, 0x00, 0x02, 7, 7, 0, 0], to: server)
                    _ = peer.receive(timeoutMilliseconds: 2000)
                }
            }
            return (relayed, clients)
        }
        #expect(relayed.count == 3)
        // Two periodic lines at least, the later ones showing the three allocations and the relayed datagram.
        let periodic = try await offPool {
            relay.child.waitForOutput(matching: #"relay: allocations 3 active / 3 made.*to peers 1 pkts"#,
                                      within: .seconds(10))
        }
        #expect(periodic != nil, "no periodic counters: \(relay.child.errorOutput.suffix(600))")
        // And it keeps printing: a second line comes one interval later.
        let repeated = try await offPool {
            relay.child.waitForOutput(matching: #"(relay: allocations [^\n]*\n[^\n]*){2}"#, within: .seconds(10))
        }
        #expect(repeated != nil)
        let (status, log) = try await offPool { relay.stop() }
        #expect(status == 0)
        let lines = log.split(separator: "\n")
        #expect(lines.filter { $0.contains(" active / ") }.count >= 3, "\(log.suffix(800))")
        // Each allocation was logged with its user, client, relayed address and lifetime ...
        for (client, address) in zip(clients, relayed) {
            #expect(lines.contains { $0.contains("relay: allocation ") && $0.contains("client=\(client)")
                && $0.contains("relay=\(address)") && $0.contains("user=u") && $0.contains("lifetime=600") })
        }
        // ... and released when the signal came, before the final summary.
        #expect(log.contains("SIGTERM, ending 3 allocations"))
        #expect(lines.filter { $0.contains("allocation released") && $0.contains("server stopping") }.count == 3)
        let summary = try #require(lines.last { $0.contains("stopped;") }.map(String.init))
        let counters = try #require(RelayCounters(lastIn: summary))
        #expect(counters.active == 0 && counters.made == 3 && counters.toPeers == 1, "\(summary)")
        // The relayed ports are closed: each can be bound again.
        for address in relayed {
            #expect((try? UDPSocket(bind: address)) != nil, "\(address) still bound after SIGTERM")
        }
    }

    @Test("--stats-interval 0 prints no periodic counters; the summary still comes")
    func statsOff() async throws {
        let relay = try RelayProcess(["--stats-interval", "0"])
        // A witness with a 100 ms interval, started after it: once the witness has printed its
        // counters twice, the relay under test has run long enough to have printed them too.
        let witness = try RelayProcess(["--stats-interval", "100ms"])
        let allocated = try await offPool { () throws -> Bool in
            let c = try RawTURNClient(server: relay.endpoint, seed: 9)
            return (try? c.allocate().get()) != nil
        }
        #expect(allocated)
        let (status, log) = try await offPool { () -> (Int32, String) in
            let ticked = witness.child.waitForOutput(matching: " active / ", count: 2, within: .seconds(10))
            #expect(ticked, "the 100 ms witness printed no counters: \(witness.child.errorOutput)")
            _ = witness.stop()
            return relay.stop()
        }
        #expect(status == 0)
        let counterLines = log.split(separator: "\n").filter { $0.contains(" active / ") }
        #expect(counterLines.count == 1 && counterLines[0].contains("stopped;"), "\(log)")
    }
}
