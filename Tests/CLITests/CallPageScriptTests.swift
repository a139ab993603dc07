import Foundation
import Testing
import TestSupport

/// The call page's JavaScript unit tests (Tests/CallPageJS: names, compaction, epochs, the inbox; for group
/// calls presence records, the roster, the join order, the offer rules, routing, the pair collector, b=AS),
/// run with `node --test` — no npm packages. Skipped without node, failing under ZONERTC_CI=1.
@Suite("Call page JavaScript", .enabled(if: ExternalProgram.runnable("node"), "node is not installed"))
struct CallPageScriptTests {
    @Test("node --test Tests/CallPageJS passes")
    func nodeTests() async throws {
        let node = try ExternalProgram.require("node", package: "nodejs")
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../CallPageJS").standardized.path
        let child = try spawnWatched([node, "--test", dir])
        let status = try await offPool { child.wait(within: .seconds(60)) }
        if status == nil { kill(child.pid, SIGKILL) }
        #expect(status == 0, "\(child.stdout.suffix(3000))\(child.stderr.suffix(2000))")
        #expect(child.stdout.contains("# fail 0"))
    }
}
