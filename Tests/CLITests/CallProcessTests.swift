import Foundation
import Testing

/// `zonertc call` as users run it: a real store daemon, two real peer processes, a file streamed
/// over loopback UDP and checked frame by frame.
@Suite("zonertc call end to end", .serialized)
struct CallProcessTests {
    struct Report: Decodable {
        struct Verdict: Decodable { var ok: Bool; var text: String }
        struct Media: Decodable {
            var framesSent: Int
            var framesReceived: Int
            var sentDigest: String?
            var receivedDigest: String?
            var retransmissions: Int
            var lost: Int
        }
        struct Drops: Decodable {
            var malformedSTUN: Int
            var socketRefused: Int
        }
        struct Summary: Decodable {
            var outcome: String
            var path: String?
            var firstFrameMs: Double?
            var media: Media?
            var restarts: Int?
            var drops: Drops?
            var goodbyeTimedOut: Bool?
        }
        var alice: Summary?
        var bob: Summary?
        var verdict: Verdict
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    func call(_ file: String, _ extra: [String] = []) throws -> (ZonertcProcess.Output, Report?) {
        let run = try ZonertcProcess.run(["call", Self.fixtures.appendingPathComponent(file).path, "--json",
                                          "--timeout", "30s"] + extra)
        let line = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (run, try? JSONDecoder().decode(Report.self, from: Data(line.utf8)))
    }

    @Test("VP8 IVF over a clean path: identical frames", arguments: [["--sync", "hybrid"], ["--pace", "max"]])
    func vp8Identical(options: [String]) throws {
        let (run, report) = try call("vp8-320x240-60.ivf", options)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let r = try #require(report)
        #expect(r.verdict.ok, "\(r.verdict.text)")
        #expect(r.alice?.media?.framesSent == 60)
        #expect(r.bob?.media?.framesReceived == 60)
        #expect(r.bob?.media?.receivedDigest == r.alice?.media?.sentDigest)
        #expect(r.bob?.path == "host")
        // The summary counts what was dropped; on loopback the sockets refused nothing, nothing
        // restarted, and each peer stopped once its call was closed, not on the goodbye's timeout.
        for summary in [r.alice, r.bob] {
            #expect(summary?.drops?.socketRefused == 0 && summary?.drops?.malformedSTUN == 0)
            #expect(summary?.restarts == 0)
            #expect(summary?.goodbyeTimedOut == false)
        }
    }

    @Test("10% loss on both peers' datagrams: NACK repairs it, identical frames",
          arguments: [[String](), ["--media-security", "none"]])
    func lossRepaired(security: [String]) throws {
        // DTLS-SRTP (the default) and plain RTP alike: the receiver knows the first sequence number
        // from the SDP and the last from the sender's final report, so a lost head or tail is
        // NACKed like any other packet.
        let (run, report) = try call("vp8-320x240-60.ivf", ["--impair", "loss=0.1,seed=7"] + security)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let r = try #require(report)
        #expect(r.verdict.ok, "\(r.verdict.text)")
        #expect((r.alice?.media?.retransmissions ?? 0) > 0)
        #expect(r.bob?.media?.lost == 0)
    }

    @Test("H.264 Annex B both ways: identical frames each way")
    func h264BothWays() throws {
        let (run, report) = try call("h264-320x240-60.h264", ["--both-ways", "--pace", "max"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let r = try #require(report)
        #expect(r.verdict.ok, "\(r.verdict.text)")
        #expect(r.alice?.media?.framesReceived == r.bob?.media?.framesSent)
    }

    @Test("each sync strategy streams identical frames", arguments: ["push", "poll-token", "poll-fullscan", "legacy"])
    func everyStrategy(strategy: String) throws {
        let (run, report) = try call("vp8-320x240-60.ivf", ["--sync", strategy, "--pace", "max"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(report?.verdict.ok == true, "\(report?.verdict.text ?? run.stderr)")
    }

    @Test("--relay-only: every packet through our TURN relay, identical frames")
    func relayOnly() throws {
        let (run, report) = try call("vp8-320x240-60.ivf", ["--relay-only", "--pace", "max"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let r = try #require(report)
        #expect(r.verdict.ok, "\(r.verdict.text)")
        #expect(r.alice?.path == "relay" && r.bob?.path == "relay")
        // Each peer waited for its allocation's deletion to be answered, well within the goodbye's time.
        #expect(r.alice?.goodbyeTimedOut == false && r.bob?.goodbyeTimedOut == false)
    }

    @Test("a truncated IVF: a clear error naming the offset, exit 1, nothing left running")
    func truncatedFile() throws {
        let source = try Data(contentsOf: Self.fixtures.appendingPathComponent("vp8-320x240-60.ivf"))
        let path = NSTemporaryDirectory() + "zonertc-truncated-\(getpid()).ivf"
        try source.prefix(source.count / 2 + 7).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try ZonertcProcess.run(["call", path, "--timeout", "20s"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("offset"), "stderr: \(run.stderr)")
    }
}
