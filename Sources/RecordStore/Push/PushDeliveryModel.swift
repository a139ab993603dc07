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
    /// Pending deliveries keyed by device, each with its due time.
    private var pending: [String: [(due: Instant, note: DeviceNotification)]] = [:]
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
        if profile.coalescing, var queue = pending[device], !queue.isEmpty {
            // A newer notification replaces the pending one; it keeps the pending one's time,
            // so a stream of changes cannot postpone delivery for ever.
            queue[queue.count - 1].note = note
            pending[device] = queue
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
        pending[device, default: []].append((due, note))
    }

    /// The earliest pending delivery time, if any.
    public var nextDeadline: Instant? {
        pending.values.compactMap { $0.map(\.due).min() }.min()
    }

    /// Deliveries due at or before `now`, in due order (ties by notification ID).
    public mutating func due(now: Instant) -> [DeviceNotification] {
        var out: [(Instant, DeviceNotification)] = []
        for device in pending.keys {
            pending[device]!.removeAll { item in
                if item.due <= now { out.append((item.due, item.note)); return true }
                return false
            }
            if pending[device]!.isEmpty { pending[device] = nil }
        }
        out.sort { ($0.0, $0.1.notification.notificationID) < ($1.0, $1.1.notification.notificationID) }
        counters.delivered += out.count
        return out.map(\.1)
    }

    /// Notifications still pending.
    public var pendingCount: Int { pending.values.reduce(0) { $0 + $1.count } }
}
