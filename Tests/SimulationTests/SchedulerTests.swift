import Simulation
import Testing
import ZoneCore

@Suite struct SchedulerTests {
    @Test("events leave in time order, same-instant events in the order scheduled; the clock follows")
    func ordering() {
        let t0 = Instant.seconds(100)
        var s = EventScheduler<String>(start: t0)
        s.schedule("c", at: t0 + .seconds(2))
        s.schedule("a1", at: t0 + .seconds(1))
        s.schedule("a2", at: t0 + .seconds(1))
        s.schedule("past", at: t0 - .seconds(5))
        var taken: [String] = []
        while let e = s.next(notAfter: t0 + .seconds(1)) { taken.append(e) }
        #expect(taken == ["past", "a1", "a2"])
        #expect(s.now == t0 + .seconds(1))
        #expect(s.nextDue == t0 + .seconds(2))
        #expect(s.next(notAfter: t0 + .seconds(10)) == "c" && s.now == t0 + .seconds(2))
        #expect(s.next(notAfter: t0 + .seconds(10)) == nil)
    }

    @Test("events are moved through the heap: each leaves once, in order, and nothing of it stays behind")
    func eventsAreMovedNotCopied() {
        final class Token {}
        let t0 = Instant.seconds(100)
        var s = EventScheduler<(number: Int, token: Token)>(start: t0)
        var random = SeededRandom(seed: 7)
        var tokens: [Token] = []
        var due: [Instant] = []
        var taken: [Int] = []
        for round in 0..<2000 {
            if random.next() % 3 != 0 || round < 10 {
                let at = s.now + .milliseconds(Int64(random.next() % 50))
                tokens.append(Token())
                due.append(at)
                s.schedule((tokens.count - 1, tokens[tokens.count - 1]), at: at)
                #expect(!isKnownUniquelyReferenced(&tokens[tokens.count - 1]))
            } else if let event = s.next(notAfter: s.now + .milliseconds(Int64(random.next() % 20))) {
                taken.append(event.number)
            }
            // A token waiting is held by the heap once; a token taken (and dropped) by no one but the test.
            if let last = taken.last { #expect(isKnownUniquelyReferenced(&tokens[last])) }
        }
        while let event = s.next(notAfter: .seconds(1_000)) { taken.append(event.number) }
        #expect(taken.count == tokens.count && Set(taken).count == tokens.count)
        #expect(zip(taken, taken.dropFirst()).allSatisfy { due[$0] < due[$1] || (due[$0] == due[$1] && $0 < $1) })
        #expect(s.count == 0 && s.processed == tokens.count)
        for i in tokens.indices { #expect(isKnownUniquelyReferenced(&tokens[i])) }
    }

    @Test("durations, windows, links and latencies parse; bad text says what to write")
    func parsing() throws {
        #expect(SimulationDuration.parse("1.5s") == .milliseconds(1500))
        #expect(SimulationDuration.parse("250us") == .microseconds(250))
        #expect(SimulationDuration.parse("fast") == nil)
        #expect(FaultWindow.parse("2s-20s") == FaultWindow(start: .seconds(2), end: .seconds(20)))
        #expect(FaultWindow.parse("5s+3s") == FaultWindow(start: .seconds(5), end: .seconds(8)))
        #expect(FaultWindow.parse("20s-2s") == nil)
        let link = try LinkProfile.parse("latency=40ms,loss=0.1,bandwidth=2mbit")
        #expect(link.delay == .milliseconds(40) && link.loss == 0.1 && link.bitsPerSecond == 2_000_000)
        #expect(throws: LinkProfile.ParseError.self) { try LinkProfile.parse("loss=2") }
        #expect(throws: LinkProfile.ParseError.self) { try LinkProfile.parse("speed=fast") }
        #expect(try LatencyDistribution.parse("median=100ms,p95=300ms")
                    == .logNormal(median: .milliseconds(100), p95: .milliseconds(300)))
        #expect(throws: LatencyDistribution.ParseError.self) { try LatencyDistribution.parse("min=3s,max=1s") }
    }
}
