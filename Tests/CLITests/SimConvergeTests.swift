import Foundation
import Testing

/// `zonertc sim converge` as a user runs it: the table, the trace hash, files, JSON, usage errors.
@Suite("zonertc sim converge")
struct SimConvergeTests {
    static let small = ["sim", "converge", "--trials", "3", "--strategies", "hybrid,legacy", "--push-loss", "0,0.2",
                        "--nat", "none,port-restricted", "--old-epochs", "2", "--seed", "7"]

    static func hash(_ stdout: String) -> String? {
        stdout.split(separator: "\n").first { $0.hasPrefix("trace hash: ") }.map { String($0.dropFirst(12)) }
    }

    @Test("prints a row per configuration, the trace hash and the speed; the same seed gives the same hash")
    func tableAndHash() throws {
        let out = try ZonertcProcess.run(Self.small)
        #expect(out.status == 0, "stderr: \(out.stderr)")
        let rows = out.stdout.split(separator: "\n").filter { $0.hasPrefix("| hybrid ") || $0.hasPrefix("| legacy ") }
        #expect(rows.count == 8)
        let hash = try #require(Self.hash(out.stdout))
        #expect(hash.count == 64 && hash.allSatisfy(\.isHexDigit))
        #expect(out.stdout.contains("trials per CPU second"))
        #expect(!out.stderr.contains("sim converge:"), "no progress line when stderr is not a terminal")
        #expect(Self.hash(try ZonertcProcess.run(Self.small).stdout) == hash)
        var other = Self.small
        other[other.count - 1] = "8"
        #expect(Self.hash(try ZonertcProcess.run(other).stdout) != hash)
    }

    @Test("--json, --csv and --svg")
    func files() throws {
        let dir = NSTemporaryDirectory() + "zonertc-sim-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = try ZonertcProcess.run(Self.small + ["--json", "--csv", dir + "/r.csv", "--svg", dir + "/r.svg",
                                                       "--trace", dir + "/trace.txt"])
        #expect(out.status == 0, "stderr: \(out.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        #expect((json["traceHash"] as? String)?.count == 64)
        #expect((json["configurations"] as? [Any])?.count == 8)
        #expect(json["trialsPerCPUSecond"] is Double)
        let csv = try String(contentsOfFile: dir + "/r.csv", encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 9)
        let svg = try String(contentsOfFile: dir + "/r.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("push loss 0.2 · NAT port-restricted"))
        let trace = try String(contentsOfFile: dir + "/trace.txt", encoding: .utf8)
        #expect(trace.contains("converged") && trace.contains("store-req"))
        // The JSON run and the table run are the same simulation.
        #expect(json["traceHash"] as? String == Self.hash(try ZonertcProcess.run(Self.small).stdout))
    }

    @Test("bad flags: what was wrong and the usage, exit 2", arguments: [
        (["--strategies", "carrier-pigeon"], "unknown strategy 'carrier-pigeon'"),
        (["--strategies", "push,push"], "listed twice"),
        (["--push-loss", "1.5"], "not a probability"),
        (["--nat", "cone"], "unknown NAT 'cone'"),
        (["--trials", "0"], "--trials 0"),
        (["--poll-interval", "soon"], "--poll-interval: 'soon'"),
        (["--deadline", "0s"], "positive duration"),
        (["--profile", "wifi"], "unknown push profile 'wifi'"),
        (["--link", "loss=7"], "probability"),
        (["--push-outage", "20s-2s"], "not a window"),
        (["--throttle", "busy=3"], "probability"),
        (["--store-latency", "median=1s,p95=10ms"], "p95"),
    ])
    func usageErrors(_ extra: [String], _ message: String) throws {
        let out = try ZonertcProcess.run(["sim", "converge"] + extra)
        #expect(out.status == 2)
        #expect(out.stderr.contains(message), "stderr: \(out.stderr)")
        #expect(out.stderr.contains("usage: zonertc sim converge"))
    }

    @Test("help lists every flag")
    func help() throws {
        let out = try ZonertcProcess.run(["help", "sim", "converge"])
        #expect(out.status == 0)
        for flag in ["--strategies", "--trials", "--profile", "--push-loss", "--poll-interval", "--nat", "--old-epochs",
                     "--seed", "--csv", "--svg", "--json", "--deadline", "--push-outage", "--store-restart",
                     "--token-expiry", "--throttle", "--link", "--trace", "--hold", "--no-relay"] {
            #expect(out.stdout.contains(flag), "\(flag) missing from the help")
        }
        #expect(try ZonertcProcess.run(["--help"]).stdout.contains("sim converge"))
    }
}
