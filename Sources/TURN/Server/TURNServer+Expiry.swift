import ZoneCore

/// Expiries (RFC 8656 §7, §9, §12; EVEN-PORT reservations, §14.6) kept in `expiryQueue`, so
/// `nextDeadline` after a request and a timer cost O(log n) in the number of allocations.
///
/// Requests are the only inputs that set expiries, and each touches one allocation: after one,
/// that allocation's earliest expiry is queued again if it changed. A timer takes the entries due,
/// in (instant, slot) order, and releases or sweeps only those allocations: one whose earliest
/// expiry is still ahead has nothing to remove.
extension TURNServer {
    /// Queues the allocation of `tuple` at its earliest expiry, unless that is already queued.
    mutating func scheduleExpiry(of tuple: FiveTuple) {
        guard let slot = allocations.slot(of: tuple) else { return }
        scheduleExpiry(slot: slot)
    }

    private mutating func scheduleExpiry(slot: Int) {
        guard let due = allocations.earliestExpiry(slot: slot), allocations.scheduledExpiry(slot: slot) != due else {
            return
        }
        // Through the slot: the expiry bookkeeping changes no route, so `RouteCache` stays valid.
        allocations[slot: slot]!.scheduledExpiry = due
        expiryQueue.allocations.push(due: due, id: UInt64(slot))
        if ExpiryQueue.isBloated(expiryQueue.allocations, live: allocations.count) {
            var rebuilt = DeadlineHeap()
            for (i, allocation) in allocations.slots.enumerated() {
                if let queued = allocation?.scheduledExpiry { rebuilt.push(due: queued, id: UInt64(i)) }
            }
            expiryQueue.allocations = rebuilt
        }
    }

    /// Queues a reservation made by EVEN-PORT's R bit at its expiry.
    mutating func scheduleExpiry(reservation token: UInt64, at due: Instant) {
        expiryQueue.reservations.push(due: due, id: token)
        if ExpiryQueue.isBloated(expiryQueue.reservations, live: reservations.count) {
            var rebuilt = DeadlineHeap()
            for (t, r) in reservations { rebuilt.push(due: r.expires, id: t) }
            expiryQueue.reservations = rebuilt
        }
    }

    /// Whether an allocation entry is the one queued for its slot (not left by an earlier expiry,
    /// nor by an allocation since released).
    private func isCurrent(_ entry: (due: Instant, id: UInt64)) -> Bool {
        allocations.scheduledExpiry(slot: Int(entry.id)) == entry.due
    }

    /// Whether a reservation entry is for a reservation still held (not taken by an Allocate).
    private func isCurrentReservation(_ entry: (due: Instant, id: UInt64)) -> Bool {
        reservations[entry.id]?.expires == entry.due
    }

    /// Drops stale entries from the fronts of the queues and reads the earliest current one.
    mutating func refreshDeadline() {
        while let top = expiryQueue.allocations.min, !isCurrent(top) { expiryQueue.allocations.popMin() }
        while let top = expiryQueue.reservations.min, !isCurrentReservation(top) { expiryQueue.reservations.popMin() }
        switch (expiryQueue.allocations.min?.due, expiryQueue.reservations.min?.due) {
        case (let a?, let r?): nextDeadline = min(a, r)
        case (let a, let r): nextDeadline = a ?? r
        }
    }

    /// Removes what has expired by `now`: allocations, then permissions and channels of the
    /// allocations that remain, then reservations.
    mutating func expire(now: Instant) {
        while let top = expiryQueue.allocations.min, top.due <= now {
            expiryQueue.allocations.popMin()
            guard isCurrent(top), let a = allocations[slot: Int(top.id)] else { continue }
            if a.expires <= now {
                release(a.tuple, reason: "expired")
                continue
            }
            let tuple = a.tuple
            allocations[tuple]!.permissions = a.permissions.filter { $0.value > now }
            for (number, c) in a.channels where c.expires <= now {
                allocations[tuple]!.channels[number] = nil
                allocations[tuple]!.channelByPeer[c.peer] = nil
            }
            // Its earliest expiry is now ahead of `now`, so this loop does not take it again.
            scheduleExpiry(slot: Int(top.id))
        }
        while let top = expiryQueue.reservations.min, top.due <= now {
            expiryQueue.reservations.popMin()
            guard isCurrentReservation(top), let r = reservations.removeValue(forKey: top.id) else { continue }
            usedPorts.remove(r.port)
        }
        refreshDeadline()
    }
}
