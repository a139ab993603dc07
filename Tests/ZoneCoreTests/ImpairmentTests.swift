// The seeded impairment stage: its text form (and the errors for bad specs), determinism from
// the seed, and loss, delay, jitter, reordering and duplication doing what they say.

import Testing
@testable import ZoneCore

@Suite("Impairment")
struct ImpairmentTests {
    @Test func parsesTheCommandLineForm() throws {
        let spec = try ImpairmentSpec(parsing: "loss=0.1,delay=20ms,jitter=5ms,reorder=0.05,duplicate=0.01,seed=1")
        #expect(spec == ImpairmentSpec(loss: 0.1, delay: .milliseconds(20), jitter: .milliseconds(5), reorder: 0.05,
                                       duplicate: 0.01, seed: 1))
        #expect(try ImpairmentSpec(parsing: "loss=10%") == ImpairmentSpec(loss: 0.1))
        #expect(try ImpairmentSpec(parsing: " delay=1.5s , reorder-gap=250us ")
                == ImpairmentSpec(delay: .milliseconds(1500), reorderGap: .microseconds(250)))
        #expect(try ImpairmentSpec(parsing: spec.description) == spec)
    }

    @Test("one vocabulary: the simulator's first spellings are aliases; bandwidth is a link setting only")
    func vocabulary() throws {
        #expect(try ImpairmentSpec(parsing: "latency=20ms,reorder-delay=5ms")
                == ImpairmentSpec(parsing: "delay=20ms,reorder-gap=5ms"))
        #expect(try ImpairmentSpec(parsing: "delay=2m").delay == .seconds(120))
        let twice = #expect(throws: ImpairmentSpecError.self) { try ImpairmentSpec(parsing: "delay=1ms,latency=2ms") }
        #expect(twice?.description.contains("given twice") == true)
        let rate = #expect(throws: ImpairmentSpecError.self) { try ImpairmentSpec(parsing: "bandwidth=1mbit") }
        #expect(rate?.description.contains("unknown key 'bandwidth'") == true)
        let base = ImpairmentSpec(delay: .milliseconds(20), jitter: .milliseconds(5))
        let link = try ImpairmentSpec(parsing: "loss=1%,bandwidth=2mbit", over: base, keys: ImpairmentSpec.Key.allCases)
        #expect(link == ImpairmentSpec(loss: 0.01, delay: .milliseconds(20), jitter: .milliseconds(5),
                                       bitsPerSecond: 2_000_000))
        #expect(try ImpairmentSpec(parsing: link.description, over: base, keys: ImpairmentSpec.Key.allCases) == link)
    }

    @Test("bad specs say what is wrong", arguments: [
        ("", "empty"), ("loss", "not key=value"), ("loss=2", "between 0 and 1"), ("loss=x", "not a number"),
        ("delay=20", "with a unit"), ("delay=-5ms", "negative"), ("lag=1ms", "unknown key 'lag'"),
        ("loss=0.1,loss=0.2", "given twice"), ("seed=-1", "seed"), ("loss=0.1,", "not key=value"),
    ])
    func badSpecs(_ text: String, _ message: String) {
        let error = #expect(throws: ImpairmentSpecError.self) { try ImpairmentSpec(parsing: text) }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }

    /// Submits `count` numbered items 1 ms apart and drains them; returns (item, delivery) pairs.
    private func run(_ spec: ImpairmentSpec, count: Int = 2000) -> [(Int, Instant)] {
        var stage = Impairment<Int>(spec: spec)
        var now = Instant.seconds(100)
        var out: [(Int, Instant)] = []
        for i in 0..<count {
            stage.handle(.submit(i), now: now)
            while let item = stage.pollOutput() { out.append((item, now)) }
            now += .milliseconds(1)
        }
        while let next = stage.nextDeadline {
            now = max(now, next)
            stage.handle(.timer, now: now)
            while let item = stage.pollOutput() { out.append((item, now)) }
        }
        return out
    }

    @Test func theSeedDecidesEverything() {
        let spec = ImpairmentSpec(loss: 0.2, delay: .milliseconds(10), jitter: .milliseconds(3), reorder: 0.1,
                                  duplicate: 0.05, seed: 42)
        let a = run(spec), b = run(spec)
        #expect(a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1))
        var other = spec
        other.seed = 43
        #expect(run(other).map(\.0) != a.map(\.0))
    }

    @Test func neutralSpecPassesEverythingAtOnceInOrder() {
        let out = run(ImpairmentSpec(), count: 100)
        #expect(out.map(\.0) == Array(0..<100))
        #expect(out.enumerated().allSatisfy { $1.1 == .seconds(100) + .milliseconds(Int64($0)) })
    }

    @Test func lossDelayJitterReorderDuplicate() {
        let lossy = run(ImpairmentSpec(loss: 0.1, seed: 5), count: 10_000)
        #expect((8800...9200).contains(lossy.count))
        let delayed = run(ImpairmentSpec(delay: .milliseconds(20), jitter: .milliseconds(5), seed: 6))
        let delays = delayed.map { $0.1 - (.seconds(100) + .milliseconds(Int64($0.0))) }
        #expect(delays.allSatisfy { $0 >= .milliseconds(15) && $0 <= .milliseconds(25) })
        #expect(delays.min()! < .milliseconds(16) && delays.max()! > .milliseconds(24))
        #expect(delayed.map(\.0) != delayed.map(\.0).sorted())  // jitter larger than the spacing reorders
        let reordered = run(ImpairmentSpec(reorder: 0.05, reorderGap: .milliseconds(3), seed: 7))
        let late = reordered.filter { $0.1 > .seconds(100) + .milliseconds(Int64($0.0)) }
        #expect((50...150).contains(late.count))
        #expect(late.allSatisfy { $0.1 - (.seconds(100) + .milliseconds(Int64($0.0))) == .milliseconds(3) })
        let doubled = run(ImpairmentSpec(duplicate: 0.1, seed: 8), count: 5000)
        #expect((5400...5600).contains(doubled.count))
    }

    @Test func overflowIsBoundedAndCounted() {
        var stage = Impairment<Int>(spec: ImpairmentSpec(delay: .seconds(1)), limit: 10)
        for i in 0..<25 { stage.handle(.submit(i), now: .zero) }
        #expect(stage.count == 10 && stage.stats.overflowed == 15)
    }

    @Test("the machine contract: items come out once an input's instant reached them, never before")
    func outputsFollowTheLatestInput() {
        var stage = Impairment<Int>(spec: ImpairmentSpec(delay: .milliseconds(10)))
        #expect(stage.pollOutput() == nil && stage.nextDeadline == nil)
        #expect(stage.outputs(after: .submit(1), now: .seconds(1)) == [])
        #expect(stage.outputs(after: .submit(2), now: .seconds(1) + .milliseconds(5)) == [])
        #expect(stage.nextDeadline == .seconds(1) + .milliseconds(10))
        #expect(stage.outputs(after: .timer, now: .seconds(1) + .milliseconds(9)) == [])
        #expect(stage.outputs(after: .timer, now: .seconds(1) + .milliseconds(10)) == [1])
        // An input from a driver whose clock lags does not move the stage's clock back.
        stage.handle(.timer, now: .seconds(1) + .milliseconds(20))
        #expect(stage.outputs(after: .timer, now: .seconds(1)) == [2])
        #expect(stage.nextDeadline == nil && stage.stats.delivered == 2)
    }
}
