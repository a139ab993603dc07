// The discrete-event scheduler: a virtual clock and the events queued on it. Time moves only
// when the next event is taken, to that event's instant; nothing sleeps and nothing reads a
// clock. Events due at the same instant leave in the order they were scheduled, so a run is a
// pure function of its inputs and seed.
import ZoneCore

/// A queue of events on a virtual clock.
public struct EventScheduler<Event> {
    /// A heap entry: when, in which order, and the event itself, moved through the heap's storage.
    private struct Entry {
        var due: Instant
        var sequence: UInt64
        var event: Event
    }

    /// The virtual now: the instant of the event last taken (or the start).
    public private(set) var now: Instant
    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0
    /// Events taken so far.
    public private(set) var processed = 0

    public init(start: Instant) {
        now = start
        heap.reserveCapacity(64)
    }

    /// Events waiting.
    public var count: Int { heap.count }

    /// When the next event is due.
    public var nextDue: Instant? { heap.isEmpty ? nil : heap[0].due }

    /// Whether what is due at `due` as number `sequence` leaves before what is due at `otherDue` as
    /// `otherSequence`. Entries never tie (sequences are unique), so any heap takes them in the same order.
    @inline(__always)
    private static func leaves(_ due: Instant, _ sequence: UInt64, before otherDue: Instant,
                               _ otherSequence: UInt64) -> Bool {
        due < otherDue || (due == otherDue && sequence < otherSequence)
    }

    /// Queues `event` at `instant`; an instant in the past is taken as now (time never runs back).
    public mutating func schedule(_ event: consuming Event, at instant: Instant) {
        let due = max(instant, now), sequence = nextSequence
        nextSequence &+= 1
        heap.append(Entry(due: due, sequence: sequence, event: event))
        // Sifted up through a hole: the entry is moved out of the last place, parents move down one
        // place each, and the entry is moved into the place left.
        heap.withUnsafeMutableBufferPointer { heap in
            let base = heap.baseAddress!
            var i = heap.count - 1
            guard i > 0, Self.leaves(due, sequence, before: base[(i - 1) / 2].due, base[(i - 1) / 2].sequence)
            else { return }
            let entry = (base + i).move()
            repeat {
                let parent = (i - 1) / 2
                (base + i).moveInitialize(from: base + parent, count: 1)
                i = parent
            } while i > 0 && Self.leaves(due, sequence, before: base[(i - 1) / 2].due, base[(i - 1) / 2].sequence)
            (base + i).initialize(to: entry)
        }
    }

    /// Queues `event` `delay` from now.
    public mutating func schedule(_ event: consuming Event, after delay: Duration) {
        schedule(event, at: now + delay)
    }

    /// Takes the next event if it is due at or before `limit`, moving the clock to it.
    public mutating func next(notAfter limit: Instant) -> Event? {
        guard !heap.isEmpty, heap[0].due <= limit else { return nil }
        // The root and the last entry change places, then the last entry sifts down from the root's
        // place through a hole, in the heap's storage (a swap through the array checked its uniqueness
        // and bounds at every step of every event taken); the root, last now, is taken off the end.
        heap.withUnsafeMutableBufferPointer { heap in
            let base = heap.baseAddress!, last = heap.count - 1
            guard last > 0 else { return }
            let root = base.move()
            let entry = (base + last).move()
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                guard l < last else { break }
                let child = r < last
                    && Self.leaves(base[r].due, base[r].sequence, before: base[l].due, base[l].sequence) ? r : l
                guard Self.leaves(base[child].due, base[child].sequence, before: entry.due, entry.sequence)
                else { break }
                (base + i).moveInitialize(from: base + child, count: 1)
                i = child
            }
            (base + i).initialize(to: entry)
            (base + last).initialize(to: root)
        }
        let top = heap.removeLast()
        now = top.due
        processed += 1
        return top.event
    }

    /// Moves the clock to `instant` without taking an event (the end of a run).
    public mutating func advance(to instant: Instant) {
        now = max(now, instant)
    }
}
