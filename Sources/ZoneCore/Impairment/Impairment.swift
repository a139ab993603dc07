// A seeded, sans-I/O network impairment stage on the one machine contract (`SansIOMachine`):
// datagrams go in as `.submit` inputs and come out of `pollOutput()` once the clock a `.timer` (or
// any input) brought has reached them, after the loss, delay, jitter, reordering and duplication
// an `ImpairmentSpec` describes. The kernel here has no netem, so the peer's datagram path and the
// tests put this in between instead. All randomness comes from the spec's seed: the same seed
// and the same submissions at the same instants give the same deliveries.

/// Delays, drops, reorders and duplicates items (datagrams, or datagrams with addresses).
public struct Impairment<Item: Sendable>: SansIOMachine, Sendable {
    public enum Input: Sendable {
        /// An item sent at the input's instant.
        case submit(Item)
        /// The clock moved: items due by now become outputs.
        case timer
    }

    /// An item whose delay has passed.
    public typealias Output = Item

    /// Counters of what the stage did.
    public struct Stats: Equatable, Sendable {
        public var submitted = 0
        public var dropped = 0
        public var duplicated = 0
        public var reordered = 0
        public var delivered = 0
        /// Items refused because `limit` were already waiting.
        public var overflowed = 0

        public init() {}
    }

    public let spec: ImpairmentSpec
    /// The most items held at once; more are dropped (and counted as overflow).
    public let limit: Int
    public private(set) var stats = Stats()

    private var random: SeededRandom
    private var queue = DeadlineHeap()
    private var waiting: [UInt64: Item] = [:]
    private var nextID: UInt64 = 0
    /// The latest instant an input brought (never moved back): `pollOutput()` hands out what is
    /// due by then.
    private var clock: Instant?

    public init(spec: ImpairmentSpec, limit: Int = 100_000) {
        precondition(limit > 0, "the impairment holds at least one item")
        self.spec = spec
        self.limit = limit
        random = SeededRandom(seed: spec.seed)
    }

    /// How many items wait for delivery.
    public var count: Int { waiting.count }

    public mutating func handle(_ input: Input, now: Instant) {
        if let clock, clock >= now {} else { clock = now }
        guard case .submit(let item) = input else { return }
        submit(item, now: now)
    }

    private mutating func submit(_ item: Item, now: Instant) {
        stats.submitted += 1
        if random.chance(spec.loss) {
            stats.dropped += 1
            return
        }
        enqueue(item, now: now)
        if random.chance(spec.duplicate) {
            stats.duplicated += 1
            enqueue(item, now: now)
        }
    }

    private mutating func enqueue(_ item: Item, now: Instant) {
        guard waiting.count < limit else {
            stats.overflowed += 1
            return
        }
        var delay = spec.delay.nanoseconds
        let jitter = spec.jitter.nanoseconds
        if jitter > 0 {
            // Uniform in [−jitter, +jitter].
            delay += Int64(random.next() % UInt64(2 * jitter + 1)) - jitter
        }
        if random.chance(spec.reorder) {
            stats.reordered += 1
            delay += spec.reorderGap.nanoseconds
        }
        nextID += 1
        waiting[nextID] = item
        queue.push(due: now + .nanoseconds(max(0, delay)), id: nextID)
    }

    /// The next item due by the latest input's instant, in due order (ties in submission order),
    /// or nil.
    public mutating func pollOutput() -> Item? {
        guard let clock, let top = queue.min, top.due <= clock else { return nil }
        queue.popMin()
        stats.delivered += 1
        return waiting.removeValue(forKey: top.id)
    }

    /// When the next item is due, if any waits.
    public var nextDeadline: Instant? { queue.min?.due }
}
