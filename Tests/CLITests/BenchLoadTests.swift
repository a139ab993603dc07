import Foundation
import Testing
import TestSupport

/// `zonertc bench load` against a daemon it starts: a soak in miniature (steady saves for 45 s)
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

    @Test("soak in miniature: 100 devices saving 100/s for 45 s; RSS and fds flat after warm-up, nothing lost")
    func soakInMiniature() async throws {
        let output = try await offPool {
            try ZonertcProcess.run(["bench", "load", "--devices", "100", "--bursts", "1", "--rate", "100",
                                    "--duration", "45s", "--hold", "1s", "--json"], limit: .seconds(150))
        }
        #expect(output.status == 0, "\(output.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(output.stdout.utf8))
        #expect(report.streamsReady == 100)
        #expect(report.savesSent >= 100 + 4000, "\(report.savesSent) saves sent")
        #expect(report.savesAcknowledged == report.savesSent)
        #expect(report.errors.isEmpty, "\(report.errors)")
        #expect(report.pushesUndelivered == 0)
        #expect(report.lostWrites == 0)
        let warm = try #require(report.warmRSSBytes), end = try #require(report.rateEndRSSBytes)
        #expect(Double(end) <= Double(warm) * 1.05, "RSS grew from \(warm) to \(end) bytes after warm-up")
        #expect(try #require(report.rateEndFDs) <= (try #require(report.warmFDs)) + 2)
    }

    @Test("bad command lines exit 2 with a reason")
    func refusals() throws {
        let daemons = try ZonertcProcess.run(["bench", "load", "--daemons", "2"])
        #expect(daemons.status == 2)
        #expect(daemons.stderr.contains("--daemons needs --postgres"), "\(daemons.stderr)")
        let both = try ZonertcProcess.run(["bench", "load", "--url", "http://127.0.0.1:1", "--postgres", "x"])
        #expect(both.status == 2)
    }
}
