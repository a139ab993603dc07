import Signaling
import Simulation
import Testing
import ZoneCore

@Suite struct SmokeTests {
    @Test func oneTrial() throws {
        var config = TrialConfiguration(signaling: .standard(.hybrid))
        config.traceText = true
        var trial = try CallTrial(configuration: config, index: 0, seed: 1)
        let outcome = trial.run()
        for line in outcome.trace.lines.prefix(400) { print(line) }
        print("converged", outcome.convergence as Any, "events", outcome.events)
    }
}
