import Testing
import ZoneCore

@Suite("Deadline heap")
struct DeadlineHeapTests {
    @Test("pops in (instant, id) order whatever the insertion order")
    func ordering() {
        var random = SeededRandom(seed: 5)
        var heap = DeadlineHeap()
        var expected: [(Instant, UInt64)] = []
        for id in 0..<2000 as Range<UInt64> {
            let at = Instant(nanosecondsSinceEpoch: Int64(random.next() % 500))
            heap.push(due: at, id: id)
            expected.append((at, id))
        }
        expected.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        var popped: [(Instant, UInt64)] = []
        while let top = heap.min { popped.append((top.due, top.id)); heap.popMin() }
        #expect(popped.map(\.1) == expected.map(\.1))
        #expect(heap.count == 0)
        heap.popMin()  // popping an empty heap is harmless
    }
}
