// The discrete-event scheduler: a virtual clock and the events queued on it. Time moves only
// when the next event is taken, to that event's instant; nothing sleeps and nothing reads a
// clock. Events due at the same instant leave in the order they were scheduled, so a run is a
// pure function of its inputs and seed.
import ZoneCore

/// A queue of events on a virtual clock.
public struct EventScheduler<Event> {
    /// A heap entry: when, in which order, and where the event waits (events can be large; the
    /// heap moves only these).
    private struct Entry {
        var due: Instant
        var sequence: UInt64
        var slot: Int

        @inline(__always)
        static func earlier(_ a: Entry, _ b: Entry) -> Bool {
            a.due < b.due || (a.due == b.due && a.sequence < b.sequence)
        }
    }

    /// The virtual now: the instant of the event last taken (or the start).
    public private(set) var now: Instant
    private var heap: [Entry] = []
    private var slots: [Event?] = []
    private var freeSlots: [Int] = []
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
    public var nextDue: Instant? { heap.first?.due }

    /// Queues `event` at `instant`; an instant in the past is taken as now (time never runs back).
    public mutating func schedule(_ event: consuming Event, at instant: Instant) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = event
        } else {
            slot = slots.count
            slots.append(event)
        }
        let entry = Entry(due: max(instant, now), sequence: nextSequence, slot: slot)
        nextSequence &+= 1
        heap.append(entry)
        // Sifted up through a hole: parents move down one store each, the entry is written once.
        // Entries never tie (sequences are unique), so any heap takes them in the same order.
        heap.withUnsafeMutableBufferPointer { heap in
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard Entry.earlier(entry, heap[parent]) else { break }
                heap[i] = heap[parent]
                i = parent
            }
            heap[i] = entry
        }
    }

    /// Queues `event` `delay` from now.
    public mutating func schedule(_ event: consuming Event, after delay: Duration) {
        schedule(event, at: now + delay)
    }

    /// Takes the next event if it is due at or before `limit`, moving the clock to it.
    public mutating func next(notAfter limit: Instant) -> Event? {
        guard let top = heap.first, top.due <= limit else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown()
        }
        now = top.due
        processed += 1
        let event = slots[top.slot].take()
        freeSlots.append(top.slot)
        return event
    }

    /// Moves the clock to `instant` without taking an event (the end of a run).
    public mutating func advance(to instant: Instant) {
        now = max(now, instant)
    }

    /// Sifts the root down through a hole, in the heap's storage (a swap through the array checked
    /// its uniqueness and bounds at every step of every event taken).
    private mutating func siftDown() {
        heap.withUnsafeMutableBufferPointer { heap in
            let n = heap.count
            let entry = heap[0]
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                guard l < n else { break }
                let child = r < n && Entry.earlier(heap[r], heap[l]) ? r : l
                guard Entry.earlier(heap[child], entry) else { break }
                heap[i] = heap[child]
                i = child
            }
            heap[i] = entry
        }
    }
}
