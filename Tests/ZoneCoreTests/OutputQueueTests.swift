import Testing
@testable import ZoneCore

@Suite("Output queue")
struct OutputQueueTests {
    /// Counts the instances alive, to see that every queued output is destroyed exactly once.
    final class Tracked {
        let value: Int
        let alive: Counter
        init(_ value: Int, _ alive: Counter) {
            self.value = value
            self.alive = alive
            alive.count += 1
        }
        deinit { alive.count -= 1 }
    }

    final class Counter { var count = 0 }

    @Test("hands outputs out first in, first out, through growth and reuse of its storage")
    func order() {
        var random = SeededRandom(seed: 12)
        for capacity in [0, 1, 4, 16] {
            var queue = OutputQueue<Int>(capacity: capacity)
            var model: [Int] = []
            var next = 0
            for _ in 0..<5000 {
                // Bursts of appends between partial drains: the storage grows, is compacted with
                // room at the front, and starts over once read through.
                if random.next() % 3 != 0 {
                    for _ in 0..<Int(random.next() % 7) { queue.append(next); model.append(next); next += 1 }
                } else {
                    for _ in 0..<Int(random.next() % 9) {
                        let popped = queue.pop()
                        #expect(popped == (model.isEmpty ? nil : model.removeFirst()))
                    }
                }
                #expect(queue.isEmpty == model.isEmpty)
            }
            while let value = queue.pop() { #expect(value == model.removeFirst()) }
            #expect(model.isEmpty)
            #expect(queue.pop() == nil)
        }
    }

    @Test("a ring: appends wrap around to the slots already read, and growth keeps the wrapped order")
    func wrapAroundAndGrowth() {
        var queue = OutputQueue<Int>(capacity: 4)
        for i in 0..<3 { queue.append(i) }
        #expect(queue.pop() == 0 && queue.pop() == 1)
        // Slots 3, 0 and 1: the last two wrapped around to the front of the storage.
        for i in 3..<6 { queue.append(i) }
        #expect(queue.count == 4 && queue.first == 2)
        // Full and wrapped: a copy (the storage is shared) and removal walk the ring in order.
        let copy = queue
        queue.removeAll { $0 == 3 }
        var rest: [Int] = []
        var reading = copy
        while let value = reading.pop() { rest.append(value) }
        #expect(rest == [2, 3, 4, 5])
        // Growth while wrapped: the storage doubles and the order survives.
        for i in 6..<20 { queue.append(i) }
        #expect(queue.count == 17 && queue.storage?.slots == 32)
        rest.removeAll()
        while let value = queue.pop() { rest.append(value) }
        #expect(rest == [2] + Array(4..<20))
        #expect(queue.first == nil && queue.isEmpty)
        // A queue that stays busy at a steady length goes round its storage without growing.
        var busy = OutputQueue<Int>(capacity: 8)
        for i in 0..<6 { busy.append(i) }
        for i in 6..<10_000 {
            busy.append(i)
            #expect(busy.pop() == i - 6)
        }
        #expect(busy.count == 6 && busy.storage?.slots == 8)
    }

    @Test("a copy is a queue of its own")
    func valueSemantics() {
        var original = OutputQueue<Int>(capacity: 4)
        for i in 0..<6 { original.append(i) }
        _ = original.pop()
        var copy = original
        copy.append(100)
        #expect(original.pop() == 1)
        var rest: [Int] = []
        while let value = copy.pop() { rest.append(value) }
        #expect(rest == [1, 2, 3, 4, 5, 100])
        rest.removeAll()
        while let value = original.pop() { rest.append(value) }
        #expect(rest == [2, 3, 4, 5])
    }

    @Test("every output is destroyed once: taken, or with the queue")
    func lifetimes() {
        let alive = Counter()
        do {
            var queue = OutputQueue<Tracked>(capacity: 2)
            for i in 0..<10 { queue.append(Tracked(i, alive)) }
            #expect(alive.count == 10)
            for i in 0..<4 {
                let taken = queue.pop()
                #expect(taken?.value == i)
            }
            #expect(alive.count == 6)
            var copy = queue
            #expect(copy.pop()?.value == 4)
            #expect(alive.count == 6, "the original still holds what the copy took")
            for i in 10..<13 { queue.append(Tracked(i, alive)) }
            #expect(alive.count == 9)
        }
        #expect(alive.count == 0)
    }

    @Test("count, contains and removeAll(where:) keep the others in order, destroy the removed once")
    func removal() {
        var random = SeededRandom(seed: 5)
        for capacity in [0, 4, 16] {
            var queue = OutputQueue<Int>(capacity: capacity)
            var model: [Int] = []
            for round in 0..<2000 {
                switch random.next() % 4 {
                case 0, 1:
                    for _ in 0..<Int(random.next() % 5) { queue.append(round); model.append(round) }
                case 2:
                    let popped = queue.pop()
                    #expect(popped == (model.isEmpty ? nil : model.removeFirst()))
                default:
                    let cut = Int(random.next() % 7)
                    queue.removeAll { $0 % 7 == cut }
                    model.removeAll { $0 % 7 == cut }
                }
                #expect(queue.count == model.count)
                let probe = Int(random.next() % UInt64(round + 1))
                #expect(queue.contains { $0 == probe } == model.contains(probe))
            }
            var rest: [Int] = []
            while let value = queue.pop() { rest.append(value) }
            #expect(rest == model)
        }
        let alive = Counter()
        do {
            var queue = OutputQueue<Tracked>(capacity: 2)
            for i in 0..<10 { queue.append(Tracked(i, alive)) }
            let copy = queue
            queue.removeAll { $0.value % 2 == 0 }
            #expect(alive.count == 10, "the copy keeps what the original removed")
            #expect(copy.count == 10 && queue.count == 5)
            var odd: [Int] = []
            while let value = queue.pop() { odd.append(value.value) }
            #expect(odd == [1, 3, 5, 7, 9])
            queue.removeAll { _ in true }
            #expect(queue.isEmpty)
        }
        #expect(alive.count == 0)
    }
}
