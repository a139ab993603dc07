import Testing
import ZoneCore
@testable import RecordStore

/// A change log reads as the latest sequence per key, oldest first, however it got there: a key
/// changed again right after itself (moved on in place), changed after others (its old entry
/// retired), forgotten, compacted, or restored from a snapshot.
@Suite struct ChangeLogTests {
    /// What a reader must see: each live key once, at its latest sequence, in sequence order.
    static func expected(_ latest: [String: UInt64], after seq: UInt64) -> [String] {
        latest.filter { $0.value > seq }.sorted { $0.value < $1.value }.map(\.key)
    }

    static func read(_ log: ChangeLog<String>, after seq: UInt64, limit: Int = .max) -> [String] {
        log.changes(after: seq, limit: limit).keys.map(\.key)
    }

    @Test func aKeyChangedAgainAtOnceMovesOn() {
        var log = ChangeLog<String>()
        log.record("a", at: 1)
        log.record("a", at: 2)
        log.record("b", at: 3)
        log.record("b", at: 4)
        log.record("a", at: 5)
        #expect(Self.read(log, after: 0) == ["b", "a"])
        #expect(log.changes(after: 0, limit: 10).keys.map(\.seq) == [4, 5])
        #expect(Self.read(log, after: 4) == ["a"] && Self.read(log, after: 5).isEmpty)
        #expect(log.latest == ["a": 5, "b": 4])
    }

    @Test func agreesWithTheLatestSequencePerKey() {
        var random = SeededRandom(seed: 12)
        var log = ChangeLog<String>()
        var latest: [String: UInt64] = [:]
        var seq: UInt64 = 0
        for step in 0..<3000 {
            let key = "k\(random.next() % (step < 1500 ? 4 : 40))"
            if random.next() % 10 == 0 {
                log.remove(key)
                latest[key] = nil
            } else {
                // Runs of the same key, as a zone written to again and again.
                for _ in 0...(random.next() % 3) {
                    seq += 1
                    log.record(key, at: seq)
                    latest[key] = seq
                }
            }
            let from = seq == 0 ? 0 : random.next() % (seq + 1)
            #expect(Self.read(log, after: from) == Self.expected(latest, after: from))
        }
        #expect(log.latest == latest)
        let page = log.changes(after: 0, limit: 3)
        #expect(page.keys.map(\.key) == Array(Self.expected(latest, after: 0).prefix(3)))
        #expect(page.moreComing == (latest.count > 3))
    }

    @Test func aRestoredLogReadsAsTheOneSaved() {
        var log = ChangeLog<String>(restoring: [(key: "b", seq: 7), (key: "a", seq: 3), (key: "c", seq: 7)])
        #expect(Set(Self.read(log, after: 3)) == ["b", "c"] && Self.read(log, after: 0).first == "a")
        log.record("c", at: 8)
        log.record("c", at: 9)
        log.record("b", at: 10)
        #expect(Self.read(log, after: 0) == ["a", "c", "b"])
        #expect(log.latest == ["a": 3, "b": 10, "c": 9])
    }
}
