import Foundation
import Testing

/// `zonertc peer` as users run it: two processes through a real store daemon.
@Suite("zonertc peer processes", .serialized)
struct PeerProcessTests {
    @Test("two peer processes connect through a real daemon with every sync strategy")
    func everyStrategyConnects() throws {
        let run = try ZonertcProcess.run([
            "bench", "signaling", "--profiles", "lan", "--strategies", "push,poll-token,poll-fullscan,hybrid,legacy",
            "--calls", "1", "--hold", "100ms", "--timeout", "15s", "--json",
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        struct Report: Decodable {
            struct Row: Decodable { var strategy: String; var failures: Int; var p50Ms: Double? }
            var rows: [Row]
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(run.stdout.utf8))
        #expect(report.rows.map(\.strategy) == ["push", "poll-token", "poll-fullscan", "hybrid", "legacy"])
        for row in report.rows {
            #expect(row.failures == 0, "\(row.strategy) failed")
            #expect((row.p50Ms ?? .infinity) < 10_000, "\(row.strategy) took \(row.p50Ms ?? -1) ms")
        }
        // Push learns of the offer at once; polling waits for its interval.
        let push = report.rows[0].p50Ms ?? .infinity
        let poll = report.rows[1].p50Ms ?? 0
        #expect(push < poll)
    }

    @Test("a store that is down at start: a clear error, exit 1, within the connect timeout")
    func storeDownAtStart() throws {
        let started = Date()
        let run = try ZonertcProcess.run([
            "peer", "--store", "http://127.0.0.1:1", "--room", "room_down0001", "--me", "a", "--remote", "b",
            "--token", "t", "--connect-timeout", "2s", "--json",
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("cannot reach the store at 127.0.0.1:1"))
        #expect(run.stdout.contains(#""outcome":"failed""#))
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test("bad peer command lines exit 2 with what was wrong", arguments: [
        (["peer", "--store", "x", "--room", "room_abcd1234", "--me", "a", "--remote", "a"], "--me and --remote must differ"),
        (["peer", "--store", "x", "--room", "nope", "--me", "a", "--remote", "b"], "--room"),
        (["peer", "--store", "x", "--room", "room_abcd1234", "--me", "a", "--remote", "b", "--sync", "carrier-pigeon"],
         "--sync carrier-pigeon"),
        (["peer", "--store", "x", "--room", "room_abcd1234", "--me", "a", "--remote", "b", "--connect-timeout", "soon"],
         "--connect-timeout soon"),
        (["peer", "--store", "x", "--room", "room_abcd1234", "--me", "a", "--remote", "b", "--store-requests", "0"],
         "--store-requests 0: give a number from 1 to 16"),
        (["peer", "--store", "x", "--room", "room_abcd1234", "--me", "a", "--remote", "b", "--turn", "u@127.0.0.1:1"],
         "--turn: the password is missing"),
        (["call"], "give exactly one FILE"),
        (["call", "/nonexistent.ivf"], "cannot read /nonexistent.ivf"),
        (["bench", "signaling", "--strategies", "smoke-signals"], "unknown strategy 'smoke-signals'"),
    ])
    func badCommandLines(arguments: [String], message: String) throws {
        let run = try ZonertcProcess.run(arguments)
        #expect(run.status == 2)
        #expect(run.stderr.contains(message), "stderr: \(run.stderr)")
    }
}
