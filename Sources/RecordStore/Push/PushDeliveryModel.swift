import ZoneCore

/// Decides when, and whether, each notification reaches its device: a sans-I/O machine
/// (`SansIOMachine`).
///
/// In: `.submit` for every notification the engine generated, `.timer` once `nextDeadline` has
/// passed. Out: `pollOutput()` hands out the deliveries whose time has come, in due order. The
/// server's push stream and the simulator both drive this same machine. Deterministic from its seed.
public struct PushDeliveryModel: Sendable {
    /// What happened.
    public enum Input: Sendable, Hashable {
        /// The engine generated a notification.
        case submit(DeviceNotification)
        /// Time moved on: hand out what is due.
        case timer
    }

    /// What happened to the notifications submitted so far.
    public struct Counters: Sendable, Hashable, Codable {
        public var submitted = 0
        public var delivered = 0
        public var dropped = 0
        /// Replaced by a newer notification while pending (coalescing).
        public var coalesced = 0
        /// Held past their latency by the budget.
        public var delayedByBudget = 0
        public var droppedByBudget = 0
    }

    public let profile: PushProfile
    public private(set) var counters = Counters()
    private var random: SeededRandom
    /// Pending deliveries by entry ID; the heap orders them by (due, entry ID).
    private var entries: [UInt64: (due: Instant, note: DeviceNotification)] = [:]
    private var heap = DeadlineHeap()
    /// Entry IDs pending per device, oldest first (coalescing replaces the newest).
    private var pendingByDevice: [PushDevice: [UInt64]] = [:]
    private var nextEntry: UInt64 = 0
    /// Per device: the start of the current budget window and pushes scheduled in it.
    private var windows: [PushDevice: (start: Instant, used: Int)] = [:]
    /// Deliveries due and not yet handed out.
    private var outputs = OutputQueue<DeviceNotification>()

    /// `devices`: how many devices the model will reach, when that is known. A model reaching a
    /// known few (the simulator's: one device per peer, a new model every call) then makes its
    /// tables once at that size instead of growing them from empty, one device at a time.
    public init(profile: PushProfile, seed: UInt64, devices: Int = 0) {
        self.profile = profile
        random = SeededRandom(seed: seed)
        if devices > 0 {
            entries = Dictionary(minimumCapacity: devices)
            pendingByDevice = Dictionary(minimumCapacity: devices)
            windows = Dictionary(minimumCapacity: devices)
        }
    }

    /// Feeds one input at `now`; deliveries wait in `pollOutput()`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .submit(let note): submit(note, now: now)
        case .timer: deliverDue(now: now)
        }
    }

    /// The oldest delivery not yet taken, or nil until the next input.
    public mutating func pollOutput() -> DeviceNotification? {
        outputs.pop()
    }

    /// Takes a notification the engine generated at `now`.
    private mutating func submit(_ note: DeviceNotification, now: Instant) {
        counters.submitted += 1
        let device = PushDevice(of: note)
        if random.chance(profile.dropProbability) {
            counters.dropped += 1
            return
        }
        if profile.coalescing, let newest = pendingByDevice[device]?.last {
            // A newer notification replaces the pending one; it keeps the pending one's time,
            // so a stream of changes cannot postpone delivery for ever. Replaced where it sits
            // (through the subscript, the pending entry would be copied out and back).
            entries.values[entries.index(forKey: newest)!].note = note
            counters.coalesced += 1
            return
        }
        var due = now + profile.latency.sample(&random)
        if let budget = profile.budget {
            var window = windows[device] ?? (now, 0)
            while due >= window.start + profile.budgetWindow { window = (window.start + profile.budgetWindow, 0) }
            if window.used >= budget {
                if profile.overBudget == .drop {
                    counters.droppedByBudget += 1
                    return
                }
                counters.delayedByBudget += 1
                while window.used >= budget { window = (window.start + profile.budgetWindow, 0) }
                due = max(due, window.start)
            }
            window.used += 1
            windows[device] = window
        }
        if let q = profile.burstQuantum, q.nanoseconds > 0 {
            let n = due.nanosecondsSinceEpoch
            let quantum = q.nanoseconds
            due = Instant(nanosecondsSinceEpoch: (n + quantum - 1) / quantum * quantum)
        }
        nextEntry += 1
        entries[nextEntry] = (due, note)
        heap.push(due: due, id: nextEntry)
        pendingByDevice[device, default: []].append(nextEntry)
    }

    /// The earliest pending delivery time, if any.
    public var nextDeadline: Instant? { heap.min?.due }

    /// Queues the deliveries due at or before `now`, in due order (ties in submission order).
    private mutating func deliverDue(now: Instant) {
        while let top = heap.min, top.due <= now {
            heap.popMin()
            guard let entry = entries.removeValue(forKey: top.id) else { continue }
            let device = PushDevice(of: entry.note)
            pendingByDevice[device]?.removeAll { $0 == top.id }
            if pendingByDevice[device]?.isEmpty == true { pendingByDevice[device] = nil }
            outputs.append(entry.note)
            counters.delivered += 1
        }
    }

    /// Notifications still pending.
    public var pendingCount: Int { entries.count }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension PushDeliveryModel: SansIOMachine {}
