import ZoneCore

/// Decides when, and whether, each notification reaches its device: a sans-I/O machine.
///
/// In: `submit(_:now:)` for every notification the engine generated. Out: `due(now:)` gives
/// the deliveries whose time has come; `nextDeadline` says when to call it next. The server's
/// push stream and the simulator both drive this same machine. Deterministic from its seed.
public struct PushDeliveryModel: Sendable {
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
    private var pendingByDevice: [String: [UInt64]] = [:]
    private var nextEntry: UInt64 = 0
    /// Per device: the start of the current budget window and pushes scheduled in it.
    private var windows: [String: (start: Instant, used: Int)] = [:]

    public init(profile: PushProfile, seed: UInt64) {
        self.profile = profile
        random = SeededRandom(seed: seed)
    }

    /// Takes a notification the engine generated at `now`.
    public mutating func submit(_ note: DeviceNotification, now: Instant) {
        counters.submitted += 1
        let device = "\(note.userRecordName)/\(note.deviceID)"
        if random.chance(profile.dropProbability) {
            counters.dropped += 1
            return
        }
        if profile.coalescing, let newest = pendingByDevice[device]?.last {
            // A newer notification replaces the pending one; it keeps the pending one's time,
            // so a stream of changes cannot postpone delivery for ever.
            entries[newest]!.note = note
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

    /// Deliveries due at or before `now`, in due order (ties in submission order).
    public mutating func due(now: Instant) -> [DeviceNotification] {
        var out: [DeviceNotification] = []
        while let top = heap.min, top.due <= now {
            heap.popMin()
            guard let entry = entries.removeValue(forKey: top.id) else { continue }
            let device = "\(entry.note.userRecordName)/\(entry.note.deviceID)"
            pendingByDevice[device]?.removeAll { $0 == top.id }
            if pendingByDevice[device]?.isEmpty == true { pendingByDevice[device] = nil }
            out.append(entry.note)
        }
        counters.delivered += out.count
        return out
    }

    /// Notifications still pending.
    public var pendingCount: Int { entries.count }
}
