// The twelve regression scenarios of spec §7, each runnable with our configuration or the
// `legacy` one. A scenario returns what it saw — the violations of what spec §7 requires, and
// the figures the legacy comparison prints — and asserts nothing itself: the `StaleEpoch…`
// tests assert our outcomes, the comparison test reports legacy's.
import RecordStore
import Signaling
import ZoneCore

/// Which side of the comparison runs.
enum Variant: String, CaseIterable {
    case ours, legacy

    /// Ours with `strategy`, or the legacy configuration.
    func configuration(_ strategy: SyncStrategy = .hybrid) -> SignalingConfiguration {
        self == .ours ? .standard(strategy) : .legacy
    }

    /// The same protections with no ingestion path: records arrive only as the test hands them.
    var manual: SignalingConfiguration {
        var c = configuration()
        c.name += "-manual"
        c.ingestion = []
        return c
    }
}

/// What a scenario saw.
final class ScenarioOutcome: CustomStringConvertible {
    var name: String
    /// Requirements of spec §7 that did not hold.
    var violations: [String] = []
    /// Whether the call ended connected on one epoch on both sides.
    var converged = false
    /// Remote offers applied over a set remote description (both peers' ICE).
    var resets = 0
    /// Descriptions and candidates applied twice.
    var duplicateApplies = 0
    /// Descriptions or candidates of epochs that were stale when applied.
    var staleApplications = 0
    /// Candidates given to ICE with no description of their epoch.
    var candidateErrors = 0
    var recordsFetched = 0
    var bytesFetched = 0
    var requests = 0
    var notes: [String] = []

    init(_ name: String) { self.name = name }

    func require(_ condition: Bool, _ violation: @autoclosure () -> String) {
        if !condition { violations.append(violation()) }
    }

    /// Takes the figures of a harness (the ICE logs of the current call, the counters).
    func collect(_ h: CallHarness, oldEpochs: Set<CallEpoch> = []) {
        converged = h.converged
        for p in h.peers {
            resets += p.ice.resets
            duplicateApplies += p.ice.duplicateDescriptions + p.ice.duplicateCandidates
            candidateErrors += p.ice.candidateErrors
            staleApplications += p.ice.appliedDescriptions.filter { oldEpochs.contains($0.epoch) }.count
                + p.ice.appliedCandidates.filter { oldEpochs.contains($0.epoch) }.count
            recordsFetched += p.counters.recordsFetched
            bytesFetched += p.counters.bytesFetched
            requests += p.counters.storeRequests
        }
    }

    var description: String {
        "\(name): converged \(converged), resets \(resets), duplicate applies \(duplicateApplies), stale applications "
            + "\(staleApplications), candidate errors \(candidateErrors), fetched \(recordsFetched) records / "
            + "\(bytesFetched) bytes in \(requests) requests; violations \(violations); "
            + notes.joined(separator: "; ")
    }
}

enum StaleEpochScenarios {
    static let all: [(String, @Sendable (Variant) async throws -> ScenarioOutcome)] = [
        ("01", s01OldEpochRecordsAtCallStart), ("02", s02OldOfferAfterRemoteDescription),
        ("03", s03SameRecordByThreePaths), ("04", s04CandidatesBeforeDescription), ("05", s05EpochGlare),
        ("06", s06ConcurrentSessionUpdates), ("07", s07GarbageCollectionDuringRestart),
        ("08", s08ChunkAfterEndOfCandidates), ("09", s09MismatchedUfrag), ("10", s10ClockStepsBackwards),
        ("11", s11FullScanOverThousandOldRecords), ("12", s12PushLost),
    ]

    /// Every epoch either ICE fake has seen so far.
    static func epochsSeen(_ h: CallHarness) -> Set<CallEpoch> {
        var seen = Set<CallEpoch>()
        for p in h.peers {
            seen.formUnion(p.ice.appliedDescriptions.map(\.epoch))
            seen.formUnion(p.ice.connections)
            if let e = p.ice.localEpoch { seen.insert(e) }
        }
        return seen
    }

    // MARK: 1

    /// Old offers, answers and chunks are in the zone when a new call starts — the last
    /// epoch of the previous call, and leftovers of two older ones (an offer never answered
    /// among them). The answering peer starts first and looks at them alone for 3 s.
    static func s01OldEpochRecordsAtCallStart(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("01 old-epoch records at call start")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        await h.startCall()
        await h.connect(within: .seconds(20))
        await h.a.send(.restart, now: h.now)
        await h.connect(within: .seconds(20))
        var old = epochsSeen(h)
        let newest = old.max() ?? CallEpoch(milliseconds: h.now.millisecondsSinceEpoch)
        let l1 = CallEpoch(milliseconds: newest.milliseconds - 60_000)
        let l2 = CallEpoch(milliseconds: newest.milliseconds - 30_000)
        try await h.save([
            SignalFixtures.envelope(.offer, by: h.a, epoch: l1, ufrag: "oldA1"),
            SignalFixtures.chunk(by: h.a, epoch: l1, seq: 0, ufrag: "oldA1",
                                 candidates: [SignalFixtures.candidate(octet: 91, ufrag: "oldA1")]),
            SignalFixtures.envelope(.offer, by: h.a, epoch: l2, ufrag: "oldA2"),
        ], as: h.a)
        try await h.save([
            SignalFixtures.envelope(.answer, by: h.b, epoch: l2, ufrag: "oldB2"),
            SignalFixtures.chunk(by: h.b, epoch: l2, seq: 0, ufrag: "oldB2",
                                 candidates: [SignalFixtures.candidate(octet: 92, ufrag: "oldB2")],
                                 endOfCandidates: true),
        ], as: h.b)
        old.formUnion([l1, l2])
        for p in h.peers { await p.send(.hangUp, now: h.now) }
        await h.run(for: .seconds(1))

        try h.newCall()
        await h.b.send(.start, now: h.now)
        await h.run(for: .seconds(3))
        o.require(h.b.state == .waitingForOffer, "B acted on an old offer before the call's first offer (\(h.b.state))")
        await h.a.send(.start, now: h.now)
        o.require(await h.connect(within: .seconds(20)), "the new call did not connect")
        if let epoch = h.a.ice.connectedEpoch {
            o.require(epoch > newest, "the new call's epoch \(epoch) is not above the old ones")
        }
        o.collect(h, oldEpochs: old)
        o.require(o.staleApplications == 0, "\(o.staleApplications) old-epoch descriptions or candidates applied")
        return o
    }

    // MARK: 2

    /// Connected; then A's offer is saved again (same content, a new change tag, as a retried
    /// or re-published record would be) and B fetches it; the same version comes once more by
    /// another path; after a restart, the first epoch's offer comes yet again.
    static func s02OldOfferAfterRemoteDescription(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("02 old offer after remote description")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")
        let first = h.a.ice.connectedEpoch ?? CallEpoch(milliseconds: 0)
        let offerID = RecordID(recordName: h.a.negotiator.names.envelope(epoch: first, type: .offer),
                               zoneID: h.a.binding.zone)
        func resaveOffer() async throws -> Record? {
            guard var offer = try await h.a.client.lookupRecords([offerID], scope: .private).first?.record else {
                return nil
            }
            offer.recordChangeTag = nil
            return try await h.a.client.save([offer], scope: .private, policy: .allKeys).first
        }
        let again = try await resaveOffer()
        await h.run(for: .seconds(5))
        if let again { await h.b.send(.fetched([again], deleted: []), now: h.now) }
        await h.run(for: .seconds(1))
        o.require(h.b.ice.resets == 0, "B reset the call when the offer came again (\(h.b.ice.resets) resets)")
        o.require(h.converged, "the call is no longer connected after the offer came again")

        await h.a.send(.restart, now: h.now)
        o.require(await h.connect(within: .seconds(20)), "the restart did not connect")
        _ = try await resaveOffer()
        await h.run(for: .seconds(5))
        o.require(h.converged, "the call is no longer connected after the first epoch's offer came again")
        o.collect(h)
        o.staleApplications = max(0, h.b.ice.appliedDescriptions.filter { $0.epoch == first }.count - 1)
        o.require(o.resets == 0, "\(o.resets) resets")
        o.require(o.staleApplications == 0, "the first epoch's offer was applied again after the restart")
        return o
    }

    // MARK: 3

    /// Both peers learn through push, a token poll and a full scan at once.
    static func s03SameRecordByThreePaths(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("03 same record by push, token poll and full scan")
        let three = SignalingConfiguration(name: "three-paths", ingestion: [
            IngestionPath(name: "push", strategy: .push), IngestionPath(name: "token", strategy: .pollToken),
            IngestionPath(name: "scan", strategy: .pollFullScan),
        ])
        let config = v == .ours ? three : .legacy
        let h = try await CallHarness(a: config, b: config)
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")
        await h.run(for: .seconds(6))
        o.collect(h)
        let arrivedTwice = h.peers.map { $0.counters.duplicates }.reduce(0, +)
        o.notes.append("record versions arriving more than once: \(arrivedTwice)")
        let handedTwice = h.peers.map { $0.negotiator.counters.repeatedDescriptionsIgnored }.reduce(0, +)
        o.require(handedTwice == 0, "the negotiator was handed \(handedTwice) records it already had")
        o.require(o.duplicateApplies == 0, "\(o.duplicateApplies) descriptions or candidates applied twice")
        o.require(o.resets == 0, "\(o.resets) resets")
        o.require(h.converged, "the call is not connected at the end")
        return o
    }

    // MARK: 4

    /// Records reach each peer only as handed over: a peer's candidates first (end-of-candidates
    /// before the first batch), then its offer or answer.
    static func s04CandidatesBeforeDescription(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("04 candidates before their description")
        let h = try await CallHarness(a: v.manual, b: v.manual)
        await h.startCall()
        func handOver(to peer: TestPeer, from owner: TestPeer) async throws {
            let records = try await h.zoneRecords(as: peer).filter {
                $0.fields[SignalField.ownerUserId]?.stringValue == owner.userID
                    || $0.fields[SignalField.userId]?.stringValue == owner.userID
            }
            let chunks = records.filter { $0.recordType == SignalRecordType.iceChunk }
            let rest = records.filter { $0.recordType != SignalRecordType.iceChunk }
            await peer.send(.fetched(chunks.sorted { $0.fields[SignalField.seq]!.int64Value!
                                                     > $1.fields[SignalField.seq]!.int64Value! }, deleted: []),
                            now: h.now)
            o.require(peer.ice.appliedCandidates.isEmpty && peer.ice.candidateErrors == 0,
                      "\(peer.userID) used candidates before their description")
            await peer.send(.fetched(rest, deleted: []), now: h.now)
            o.require(peer.ice.appliedCandidates.count == 2 && peer.ice.candidateErrors == 0,
                      "\(peer.userID) has \(peer.ice.appliedCandidates.count) candidates after the description "
                      + "(\(peer.ice.candidateErrors) errors); 2 expected")
        }
        try await handOver(to: h.b, from: h.a)
        try await handOver(to: h.a, from: h.b)
        o.require(await h.connect(within: .seconds(5)), "the call did not connect")
        o.notes.append("early holds: \(h.a.counters.earlyCandidateHolds + h.b.counters.earlyCandidateHolds)")
        o.collect(h)
        return o
    }

    // MARK: 5

    /// Connected; both peers restart at the same millisecond (equal epochs: the offer creator's
    /// wins), then again a millisecond apart (the higher epoch wins).
    static func s05EpochGlare(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("05 epoch glare")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")

        await h.a.send(.restart, now: h.now)
        await h.b.send(.restart, now: h.now)
        let tie = CallEpoch(milliseconds: h.now.millisecondsSinceEpoch)
        o.require(await h.connect(within: .seconds(20)), "the call did not reconnect after a tied restart")
        o.require(h.a.ice.connectedEpoch == tie, "tie: connected on \(String(describing: h.a.ice.connectedEpoch)), "
                  + "not the tied epoch \(tie)")
        let offer = try await h.zoneRecords(as: h.a).first {
            $0.id.recordName == h.a.negotiator.names.envelope(epoch: tie, type: .offer)
        }
        o.require(offer?.fields[SignalField.ownerUserId]?.stringValue == h.a.userID,
                  "tie: the offer of the tied epoch is not the offer creator's")

        // The tie again, the polite peer's offer landing first: the creator overwrites it.
        await h.b.send(.restart, now: h.now)
        await h.a.send(.restart, now: h.now)
        let tie2 = CallEpoch(milliseconds: h.now.millisecondsSinceEpoch)
        o.require(await h.connect(within: .seconds(20)), "the call did not reconnect after the second tie")
        o.require(h.b.ice.connectedEpoch == tie2, "second tie: connected on "
                  + "\(String(describing: h.b.ice.connectedEpoch)), not the tied epoch \(tie2)")
        let offer2 = try await h.zoneRecords(as: h.b).first {
            $0.id.recordName == h.a.negotiator.names.envelope(epoch: tie2, type: .offer)
        }
        o.require(offer2?.fields[SignalField.ownerUserId]?.stringValue == h.a.userID,
                  "second tie: the offer of the tied epoch is not the offer creator's")
        o.notes.append("glare: A ignored \(h.a.negotiator.counters.glareIgnored), "
                       + "B yielded \(h.b.negotiator.counters.glareYielded)")

        await h.a.send(.restart, now: h.now)
        let lost = h.a.negotiator.activeEpoch!
        h.clock.advance(by: .milliseconds(1))
        await h.b.send(.restart, now: h.now)
        let higher = CallEpoch(milliseconds: h.now.millisecondsSinceEpoch)
        o.require(await h.connect(within: .seconds(20)), "the call did not reconnect after restarts 1 ms apart")
        o.require(h.b.ice.connectedEpoch == higher, "1 ms apart: connected on "
                  + "\(String(describing: h.b.ice.connectedEpoch)), not the higher epoch \(higher)")
        o.require(h.a.negotiator.counters.epochsAbandoned >= 1, "the lower epoch was not abandoned")
        o.collect(h, oldEpochs: [lost])
        o.require(o.staleApplications == 0, "the losing epoch's descriptions or candidates were applied")
        o.require(o.resets == 0, "\(o.resets) resets")
        return o
    }

    // MARK: 6

    /// Both peers write `SignalSession` from the same version. First B's device clock runs
    /// 60 s ahead, so B's epoch is the higher: B's lands first and A's lower one must not
    /// overwrite it. Then, two minutes later, A's lower epoch lands first and B's higher one
    /// must still win.
    static func s06ConcurrentSessionUpdates(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("06 concurrent SignalSession updates")
        let start = Instant.seconds(1_700_000_000)
        let ahead = EpochClock(last: CallEpoch(milliseconds: start.millisecondsSinceEpoch + 60_000))
        let h = try await CallHarness(a: v.configuration(), b: v.configuration(), epochClocks: (EpochClock(), ahead),
                                      start: start)
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")

        await h.b.send(.restart, now: h.now)
        let higher = h.b.negotiator.activeEpoch
        await h.a.send(.restart, now: h.now)
        let lower = h.a.negotiator.activeEpoch
        o.notes.append("higher-first: B \(String(describing: higher)), A \(String(describing: lower))")
        o.require(await h.connect(within: .seconds(20)), "higher-first: the call did not reconnect")
        let afterFirst = try await h.sessionRecord()?.callEpoch
        o.require(afterFirst == higher, "higher-first: the session says \(String(describing: afterFirst)), "
                  + "B's higher epoch \(String(describing: higher)) was lost")
        o.require(h.a.ice.connectedEpoch == higher, "higher-first: connected on "
                  + "\(String(describing: h.a.ice.connectedEpoch)), not \(String(describing: higher))")

        await h.run(for: .seconds(120), step: .seconds(1))
        await h.a.send(.restart, now: h.now)
        h.clock.advance(by: .milliseconds(1))
        await h.b.send(.restart, now: h.now)
        let highest = [h.a.negotiator.epochClock.last, h.b.negotiator.epochClock.last].compactMap { $0 }.max()
        o.require(await h.connect(within: .seconds(20)), "lower-first: the call did not reconnect")
        let afterSecond = try await h.sessionRecord()?.callEpoch
        o.require(afterSecond == highest, "lower-first: the session says \(String(describing: afterSecond)), "
                  + "the highest epoch was \(String(describing: highest))")
        let conflicts = h.peers.map { $0.negotiator.counters.sessionConflicts }.reduce(0, +)
        let retries = h.peers.map { $0.negotiator.counters.saveRetries }.reduce(0, +)
        o.notes.append("session conflicts \(conflicts), save retries \(retries)")
        o.require(retries <= 4, "\(retries) save retries: the merge does not settle")
        o.collect(h)
        return o
    }

    // MARK: 7

    /// Connected; A restarts while B is offline for 11 minutes, past the 10-minute TTL, with
    /// A's garbage collection sweeping every minute; then B comes back.
    static func s07GarbageCollectionDuringRestart(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("07 GC during a restart")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")
        let first = h.a.ice.connectedEpoch
        h.b.paused = true
        await h.a.send(.restart, now: h.now)
        let restarted = h.a.negotiator.activeEpoch!
        await h.run(for: .seconds(11 * 60), step: .seconds(1))
        let names = h.a.negotiator.names
        let zone = try await h.zoneRecords(as: h.a)
        let activeLeft = zone.filter { $0.fields[SignalField.callEpoch]?.int64Value == restarted.milliseconds }
        o.require(activeLeft.contains { $0.id.recordName == names.envelope(epoch: restarted, type: .offer) },
                  "the active epoch's offer was deleted")
        o.require(activeLeft.filter { $0.recordType == SignalRecordType.iceChunk }.count == 2,
                  "the active epoch's chunks were deleted (\(activeLeft.count) records of it left)")
        let oldLeft = zone.filter { r in
            r.recordType != SignalRecordType.session
                && first.map { r.fields[SignalField.callEpoch]?.int64Value == $0.milliseconds } == true
        }
        o.notes.append("records of the first epoch left after the TTL: \(oldLeft.count); "
                       + "GC deletions \(h.a.counters.gcDeletions)")
        h.b.paused = false
        o.require(await h.connect(within: .seconds(30)), "B did not join the restarted epoch")
        o.require(h.b.ice.connectedEpoch == restarted, "connected on another epoch than the restart's")
        o.collect(h)
        return o
    }

    // MARK: 8

    /// Connected; then a chunk of A's numbered after A's end-of-candidates appears.
    static func s08ChunkAfterEndOfCandidates(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("08 chunk after end-of-candidates")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")
        let epoch = h.a.ice.connectedEpoch!
        let ufrag = h.a.ice.localUfrag!
        let late = SignalFixtures.candidate(octet: 99, ufrag: ufrag)
        try await h.save([SignalFixtures.chunk(by: h.a, epoch: epoch, seq: 2, ufrag: ufrag, candidates: [late])],
                         as: h.a)
        await h.run(for: .seconds(5))
        o.require(!h.b.ice.appliedCandidates.contains { $0.candidate == late },
                  "B applied a candidate sent after end-of-candidates")
        o.collect(h)
        return o
    }

    // MARK: 9

    /// A's ICE never says end-of-candidates; after connecting, a chunk of A's next seq carries
    /// another generation's ufrag, and the chunk after it A's real one.
    static func s09MismatchedUfrag(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("09 chunk with a mismatched ufrag")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        h.a.ice.sendsEndOfCandidates = false
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect")
        let epoch = h.a.ice.connectedEpoch!
        let ufrag = h.a.ice.localUfrag!
        let foreign = SignalFixtures.candidate(octet: 97, ufrag: nil)  // only the chunk names its generation
        let genuine = SignalFixtures.candidate(octet: 98, ufrag: ufrag)
        try await h.save([
            SignalFixtures.chunk(by: h.a, epoch: epoch, seq: 1, ufrag: "zzzz", candidates: [foreign]),
            SignalFixtures.chunk(by: h.a, epoch: epoch, seq: 2, ufrag: ufrag, candidates: [genuine]),
        ], as: h.a)
        await h.run(for: .seconds(5))
        o.require(!h.b.ice.appliedCandidates.contains { $0.candidate == foreign },
                  "B applied a candidate of another ICE generation")
        o.require(h.b.ice.appliedCandidates.contains { $0.candidate == genuine },
                  "B did not apply the chunk after the mismatched one")
        o.collect(h)
        return o
    }

    // MARK: 10

    /// A call; the device clocks step back an hour; a second call; the clocks step back again
    /// and both devices have forgotten their last epoch (a restart of the app); a third call.
    static func s10ClockStepsBackwards(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("10 clock steps backwards between calls")
        let h = try await CallHarness(a: v.configuration(), b: v.configuration())
        var epochs: [CallEpoch] = []
        for call in 1...3 {
            if call > 1 {
                for p in h.peers { await p.send(.hangUp, now: h.now) }
                h.clock.set(to: h.now - .seconds(3600))
                try h.newCall(epochClocks: call == 3 ? (EpochClock(), EpochClock()) : nil)
            }
            await h.startCall()
            o.require(await h.connect(within: .seconds(20)), "call \(call) did not connect")
            if let e = h.a.ice.connectedEpoch { epochs.append(e) }
        }
        o.notes.append("epochs \(epochs)")
        o.require(epochs.count == 3 && zip(epochs, epochs.dropFirst()).allSatisfy { $0 < $1 },
                  "epochs did not increase from call to call: \(epochs)")
        o.collect(h)
        return o
    }

    // MARK: 11

    /// 1,000 signal records of 200 earlier epochs in the zone (offers, some answered, chunks of
    /// both), the session naming the last of them; both peers poll with full scans.
    static func s11FullScanOverThousandOldRecords(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("11 full scans over 1,000 old records")
        let h = try await CallHarness(a: v.configuration(.pollFullScan), b: v.configuration(.pollFullScan))
        var mine: [Record] = []
        var theirs: [Record] = []
        var old = Set<CallEpoch>()
        var k: Int64 = 0
        while mine.count + theirs.count < 999 {
            let epoch = CallEpoch(milliseconds: h.now.millisecondsSinceEpoch - 3_600_000 + k * 1000)
            old.insert(epoch)
            mine.append(SignalFixtures.envelope(.offer, by: h.a, epoch: epoch, ufrag: "a\(k)xx"))
            mine.append(SignalFixtures.chunk(by: h.a, epoch: epoch, seq: 0, ufrag: "a\(k)xx",
                                             candidates: [SignalFixtures.candidate(octet: 50, ufrag: "a\(k)xx")],
                                             endOfCandidates: true))
            if k % 2 == 0 {
                theirs.append(SignalFixtures.envelope(.answer, by: h.b, epoch: epoch, ufrag: "b\(k)xx"))
                theirs.append(SignalFixtures.chunk(by: h.b, epoch: epoch, seq: 0, ufrag: "b\(k)xx",
                                                   candidates: [SignalFixtures.candidate(octet: 60, ufrag: "b\(k)xx")],
                                                   endOfCandidates: true))
            }
            k += 1
        }
        mine = Array(mine.prefix(999 - theirs.count))
        mine.append(SignalFixtures.session(by: h.a, other: h.b, epoch: old.max()!))
        try await h.save(mine, as: h.a)
        try await h.save(theirs, as: h.b)
        await h.startCall()
        o.require(await h.connect(within: .seconds(10)), "the call did not connect")
        await h.run(for: .seconds(4))
        o.collect(h, oldEpochs: old)
        let stale = h.peers.map { $0.counters.staleDrops }.reduce(0, +)
        let scans = h.peers.map { $0.counters.sync.fullScans }.reduce(0, +)
        o.notes.append("full scans \(scans), stale drops \(stale), GC deletions "
                       + "\(h.peers.map { $0.counters.gcDeletions }.reduce(0, +))")
        o.require(o.staleApplications == 0, "\(o.staleApplications) old-epoch descriptions or candidates applied")
        o.require(o.resets == 0, "\(o.resets) resets")
        o.require(o.recordsFetched >= 1000 && o.bytesFetched > 0, "the cost was not counted")
        return o
    }

    // MARK: 12

    /// Every push is lost.
    static func s12PushLost(_ v: Variant) async throws -> ScenarioOutcome {
        let o = ScenarioOutcome("12 push lost entirely")
        let lost = PushProfile(name: "lost", latency: .fixed(.zero), dropProbability: 1, coalescing: false)
        let h = try await CallHarness(a: v.configuration(.hybrid), b: v.configuration(.hybrid), push: lost)
        await h.startCall()
        o.require(await h.connect(within: .seconds(20)), "the call did not connect without push")
        let notes = h.peers.map { $0.counters.sync.notifications }.reduce(0, +)
        o.notes.append("notifications received \(notes), connected at +\(h.now - .seconds(1_700_000_000))")
        o.collect(h)
        return o
    }
}
