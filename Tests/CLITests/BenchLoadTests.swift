import Foundation
import Testing
import TestSupport

/// `zonertc bench load` against a daemon it starts: a soak in miniature (steady saves for 25 s)
/// whose daemon must neither grow nor lose anything, and the command line's refusals.
@Suite("zonertc bench load")
struct BenchLoadTests {
    struct Report: Decodable {
        var streamsReady: Int
        var savesSent: Int
        var savesAcknowledged: Int
        var pushesUndelivered: Int
        var lostWrites: Int?
        var errors: [String: Int]
        var warmRSSBytes: Int?
        var warmFDs: Int?
        var rateEndRSSBytes: Int?
        var rateEndFDs: Int?
    }

    @Test("soak in miniature: 100 devices saving 100/s for 25 s; RSS and fds flat after warm-up, nothing lost")
    func soakInMiniature() async throws {
        let output = try await offPool {
            try ZonertcProcess.run(["bench", "load", "--devices", "100", "--bursts", "1", "--rate", "100",
                                    "--duration", "25s", "--hold", "1s", "--json"], limit: .seconds(150))
        }
        #expect(output.status == 0, "\(output.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(output.stdout.utf8))
        #expect(report.streamsReady == 100)
        #expect(report.savesSent >= 100 + 2000, "\(report.savesSent) saves sent")
        #expect(report.savesAcknowledged == report.savesSent)
        #expect(report.errors.isEmpty, "\(report.errors)")
        #expect(report.pushesUndelivered == 0)
        #expect(report.lostWrites == 0)
        let warm = try #require(report.warmRSSBytes), end = try #require(report.rateEndRSSBytes)
        #expect(Double(end) <= Double(warm) * 1.05, "RSS grew from \(warm) to \(end) bytes after warm-up")
        #expect(try #require(report.rateEndFDs) <= (try #require(report.warmFDs)) + 2)
    }

    struct CallsReport: Decodable {
        struct Calls: Decodable {
            var loneCalls: Int
            var loneConverged: Int
            var calls: Int
            var converged: Int
            var failed: Int
            var peakConcurrent: Int
            var p99Ms: Double?
            var loneP50Ms: Double?
            var loneP99Ms: Double?
            var p99OverLoneP99: Double?
            var p99OverLoneP50: Double?
            var rejectedRecords: Int
            var storeRequestsPerCall: Double?
        }
        var calls: Calls?
    }

    @Test("calls: lone calls, then 20 at once through one daemon; every one converges and ends, none fails")
    func calls() async throws {
        let output = try await offPool {
            try ZonertcProcess.run(["bench", "load", "--devices", "0", "--calls", "20", "--call-rate", "0",
                                    "--call-hold", "2s", "--lone-calls", "3", "--json"], limit: .seconds(120))
        }
        #expect(output.status == 0, "\(output.stderr)")
        let report = try #require(try JSONDecoder().decode(CallsReport.self, from: Data(output.stdout.utf8)).calls)
        #expect(report.loneConverged == 3)
        #expect(report.converged == 20)
        #expect(report.failed == 0)
        #expect(report.peakConcurrent == 20)
        #expect(report.rejectedRecords == 0)
        let p99 = try #require(report.p99Ms)
        // Both ratios, each against the lone calls' statistic it names (the goal reads p99 against p99).
        let loneP99 = try #require(report.loneP99Ms), loneP50 = try #require(report.loneP50Ms)
        #expect(abs(try #require(report.p99OverLoneP99) - p99 / loneP99) < 1e-9)
        #expect(abs(try #require(report.p99OverLoneP50) - p99 / loneP50) < 1e-9)
        // Offer, answer, candidates, the session record, goodbye: a real call's requests, not a handful.
        #expect((report.storeRequestsPerCall ?? 0) >= 10, "\(report.storeRequestsPerCall ?? 0) requests per call")
    }

    struct OverloadReport: Decodable {
        struct Recovery: Decodable {
            var sent: Int
            var acknowledged: Int
            var lastShedMs: Double?
        }
        var streamsReady: Int
        var streamsAliveAtEnd: Int
        var savesSent: Int
        var savesAcknowledged: Int
        var shed: Int
        var shedWithRetryAfter: Int
        var pushesUndelivered: Int
        var lostWrites: Int?
        var recovery: Recovery?
    }

    @Test("overload: past --max-requests-in-flight saves are shed with retryAfter, streams stay, it recovers")
    func overload() async throws {
        // 60 saves at once over 32 connections to a daemon that answers 4 at a time: most are shed.
        let output = try await offPool {
            try ZonertcProcess.run(["bench", "load", "--devices", "60", "--request-connections", "32",
                                    "--max-requests-in-flight", "4", "--hold", "1s", "--recover", "2s",
                                    "--recover-rate", "10", "--json"], limit: .seconds(120))
        }
        #expect(output.status == 0, "\(output.stderr)")
        let report = try JSONDecoder().decode(OverloadReport.self, from: Data(output.stdout.utf8))
        #expect(report.streamsReady == 60)
        #expect(report.streamsAliveAtEnd == 60)
        #expect(report.shed > 0, "nothing shed: \(output.stdout)")
        #expect(report.shedWithRetryAfter == report.shed)
        #expect(report.savesAcknowledged + report.shed == report.savesSent)
        #expect(report.pushesUndelivered == 0)
        #expect(report.lostWrites == 0)
        let recovery = try #require(report.recovery)
        #expect(recovery.sent > 0 && recovery.acknowledged == recovery.sent, "\(recovery)")
    }

    @Test("bad command lines exit 2 with a reason")
    func refusals() throws {
        let daemons = try ZonertcProcess.run(["bench", "load", "--daemons", "2"])
        #expect(daemons.status == 2)
        #expect(daemons.stderr.contains("--daemons needs --postgres"), "\(daemons.stderr)")
        let both = try ZonertcProcess.run(["bench", "load", "--url", "http://127.0.0.1:1", "--postgres", "x"])
        #expect(both.status == 2)
        let nothing = try ZonertcProcess.run(["bench", "load", "--devices", "0"])
        #expect(nothing.status == 2)
        let sync = try ZonertcProcess.run(["bench", "load", "--calls", "1", "--call-sync", "carrier-pigeon"])
        #expect(sync.status == 2)
        #expect(sync.stderr.contains("--call-sync"), "\(sync.stderr)")
    }
}
