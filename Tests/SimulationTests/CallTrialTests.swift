// Whole simulated calls: determinism of the trace, each NAT behaviour end to end, faults the
// strategies must survive, and the legacy design's resets next to ours.
import RecordStore
import Signaling
import Simulation
import Testing
import ZoneCore

/// Runs `trials` calls of `configuration` with seeds 1…trials.
func runTrials(_ configuration: TrialConfiguration, trials: Int = 5, firstSeed: UInt64 = 1) throws -> [TrialOutcome] {
    try (0..<trials).map { i in
        var trial = try CallTrial(configuration: configuration, index: i, seed: firstSeed + UInt64(i))
        return trial.run()
    }
}

func traceHash(_ outcomes: [TrialOutcome]) -> String {
    var hash = RunTraceHash()
    for o in outcomes { hash.absorb(o.trace) }
    return hash.hex
}

@Suite("Simulated calls")
struct CallTrialTests {
    static func configuration(_ strategy: String = "hybrid", nat: NATSetup = .both(nil),
                              loss: Double = 0) -> TrialConfiguration {
        var push = PushProfile.cloudkit
        push.dropProbability = loss
        return TrialConfiguration(signaling: SignalingConfiguration.named(strategy)!, push: push, nat: nat)
    }

    @Test("the same seed gives the same trace, byte for byte; another seed another")
    func determinism() throws {
        let config = Self.configuration("hybrid", nat: .both(.portRestrictedCone), loss: 0.2)
        let first = try runTrials(config, trials: 4, firstSeed: 100)
        let again = try runTrials(config, trials: 4, firstSeed: 100)
        let other = try runTrials(config, trials: 4, firstSeed: 200)
        #expect(first.map(\.trace.bytes) == again.map(\.trace.bytes))
        #expect(traceHash(first) == traceHash(again))
        #expect(traceHash(first) != traceHash(other))
        #expect(first.map(\.convergence) == again.map(\.convergence))
        #expect(first.allSatisfy { $0.trace.bytes.count > 1000 }, "the trace records the call's events")
        // The readable trace is the same run: capturing text changes nothing else.
        var withText = config
        withText.traceText = true
        let text = try runTrials(withText, trials: 4, firstSeed: 100)
        #expect(traceHash(text) == traceHash(first))
        #expect(text[0].trace.lines.contains { $0.contains("converged") })
    }

    @Test("NAT behaviours where a direct path exists: the call connects directly", arguments: [
        "none", "full-cone", "restricted-cone", "port-restricted", "symmetric/full-cone", "full-cone/symmetric",
        "symmetric/restricted-cone",
    ])
    func directWherePossible(nat: String) throws {
        let setup = try NATSetup.parse(nat)
        let outcomes = try runTrials(Self.configuration("hybrid", nat: setup), trials: 4)
        for o in outcomes {
            #expect(o.converged, "trial \(o.index) with NAT \(nat) did not connect")
            #expect(o.path == .direct)
        }
        // Where both sides filter, the first checks meet closed filters until both have sent.
        if let a = setup.a, let b = setup.b, a.filtering != .endpointIndependent, b.filtering != .endpointIndependent {
            #expect(outcomes.contains { $0.network.filtered > 0 }, "the NATs never filtered anything")
        }
    }

    @Test("a trial that hangs up runs until both calls are closed: every TURN allocation deleted, under loss")
    func hangingUpClosesEveryAllocation() throws {
        var config = Self.configuration("hybrid", nat: .both(.symmetric))
        config.link = try LinkProfile.parse("loss=0.1")
        config.traceText = true
        var retransmittedDeallocations = 0
        for i in 0..<12 {
            var trial = try CallTrial(configuration: config, index: i, seed: 500 + UInt64(i))
            let outcome = trial.run(hold: .seconds(1), hangUp: true)
            #expect(outcome.converged, "trial \(i) did not connect")
            #expect(outcome.path == .relayed)
            let closing = try #require(outcome.closing, "trial \(i) did not close")
            #expect(closing < CallTrial.closingLimit)
            #expect(outcome.relay.allocations >= 2)
            #expect(outcome.relayAllocationsLeft == 0, "trial \(i) left \(outcome.relayAllocationsLeft) allocation(s)")
            let lines = outcome.trace.lines
            let hangUp = try #require(lines.firstIndex { $0.contains(" hang-up") })
            #expect(lines.last?.contains(" closed") == true, "\(lines.suffix(3))")
            // A Refresh with LIFETIME 0 is 116 bytes here: more than one per peer is a retransmission.
            let deallocations = lines[hangUp...].filter { $0.contains("> 203.0.113.100:3478 116 bytes") }.count
            retransmittedDeallocations += max(0, deallocations - 2)
        }
        #expect(retransmittedDeallocations > 0, "the loss never hit a deallocation: the test proves less than it says")
    }

    @Test("symmetric NATs on both sides need the relay: without it no call connects, with it every call does")
    func symmetricBothSidesNeedsRelay() throws {
        let setup = NATSetup.both(.symmetric)
        #expect(setup.needsRelay)
        var withoutRelay = Self.configuration("hybrid", nat: setup)
        withoutRelay.offerRelay = false
        withoutRelay.deadline = .seconds(20)
        // Without relayed candidates no pair can work: checks die in the NATs' filters.
        for o in try runTrials(withoutRelay, trials: 3) {
            #expect(!o.converged, "trial \(o.index) connected through two symmetric NATs without a relay")
            #expect(o.network.filtered > 0 && o.relay.allocations == 0)
        }
        #expect(CallTrial.relaysGathered, "the peers' transport gathers relayed candidates")
        let withRelay = Self.configuration("hybrid", nat: setup)
        for o in try runTrials(withRelay, trials: 4) {
            #expect(o.converged && o.path == .relayed, "trial \(o.index): \(String(describing: o.path))")
            #expect(o.relay.allocations >= 2 && o.relay.packetsToPeers > 0)
        }
    }

    @Test("a push outage through the whole call: hybrid still connects, push alone cannot")
    func pushOutageSurvivedByHybrid() throws {
        var faults = StoreFaults()
        faults.pushOutages = [FaultWindow(start: .zero, end: .seconds(60))]
        var hybrid = Self.configuration("hybrid")
        hybrid.faults = faults
        var push = Self.configuration("push")
        push.faults = faults
        push.deadline = .seconds(30)
        for o in try runTrials(hybrid) {
            #expect(o.converged, "hybrid trial \(o.index) did not connect through the outage")
            #expect(o.firstPush == nil && o.store.pushesLostToFaults > 0)
        }
        // Push alone makes its first catch-up fetch and then hears nothing: B never sees the offer.
        for o in try runTrials(push) {
            #expect(!o.converged, "push trial \(o.index) connected without any push")
        }
    }

    @Test("old epochs in the zone: legacy resets the call, ours drops them as stale and never resets")
    func legacyResetsWhereOursDoesNot() throws {
        var legacy = Self.configuration("legacy")
        legacy.oldEpochs = 3
        var ours = Self.configuration("hybrid")
        ours.oldEpochs = 3
        let legacyOutcomes = try runTrials(legacy, trials: 6)
        let ourOutcomes = try runTrials(ours, trials: 6)
        #expect(legacyOutcomes.reduce(0) { $0 + $1.resets } > 0, "legacy never reset")
        for o in ourOutcomes {
            #expect(o.converged)
            #expect(o.resets == 0, "ours reset trial \(o.index)")
            #expect(o.staleDrops > 0, "ours did not see the old records")
        }
        // Without old records legacy still re-applies the offers its three paths deliver again:
        // resets, and (the connection surviving a renegotiation) calls that still connect.
        let plain = try runTrials(Self.configuration("legacy"), trials: 6)
        #expect(plain.reduce(0) { $0 + $1.resets } > 0)
        let stillConnect = plain.allSatisfy(\.converged)
        #expect(stillConnect, "\(plain.map(\.convergence))")
    }

    @Test("token expiry, a store restart and injected store errors are survived")
    func storeFaultsSurvived() throws {
        var expiry = Self.configuration("poll-token")
        expiry.faults.tokenExpiries = [.seconds(1), .seconds(3)]
        for o in try runTrials(expiry) {
            #expect(o.converged, "trial \(o.index) did not survive token expiry")
            #expect(o.peers.reduce(0) { $0 + $1.sync.tokenResets } > 0 && o.store.tokensExpired > 0)
        }
        var restart = Self.configuration("hybrid")
        restart.faults.restarts = [FaultWindow(start: .milliseconds(100), end: .seconds(5))]
        for o in try runTrials(restart) {
            #expect(o.converged, "trial \(o.index) did not survive the restart")
            #expect(o.store.refusedRestarting > 0)
            #expect(o.convergence! > .seconds(5), "connected while the store was down")
        }
        var errors = Self.configuration("hybrid")
        errors.store.throttle.injectZoneBusy = 0.2
        errors.store.throttle.injectServiceUnavailable = 0.05
        errors.store.throttle.retryAfterSeconds = 1...2
        let outcomes = try runTrials(errors, trials: 8)
        #expect(outcomes.filter(\.converged).count >= 6, "\(outcomes.map(\.convergence))")
        #expect(outcomes.reduce(0) { $0 + $1.store.failures } > 0, "no error was injected")
    }

    @Test("lossy, reordering, duplicating links still connect")
    func impairedLinks() throws {
        var config = Self.configuration("hybrid", nat: .both(.portRestrictedCone))
        config.link = try LinkProfile.parse(
            "latency=40ms,jitter=30ms,loss=0.1,reorder=0.1,duplicate=0.05,bandwidth=1mbit")
        let outcomes = try runTrials(config, trials: 6)
        #expect(outcomes.filter(\.converged).count >= 5)
        #expect(outcomes.reduce(0) { $0 + $1.network.lost } > 0)
        #expect(outcomes.reduce(0) { $0 + $1.network.duplicated } > 0)
    }
}
