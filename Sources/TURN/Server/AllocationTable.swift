import STUN
import ZoneCore

/// The server's allocations, by 5-tuple and by slot.
///
/// Each allocation sits in a numbered slot that stays the same for its whole life, so a driver can
/// keep its relayed socket in an array at that index (`RelayHandle`) instead of hashing an address
/// for every datagram. The data path works on an allocation through its slot.
struct AllocationTable: Sendable {
    private(set) var slots: [Allocation?] = []
    private var freeSlots: [Int] = []
    private var slotByTuple: [FiveTuple: Int] = [:]
    /// Bumped by every change through the 5-tuple subscript (the control path: allocations,
    /// permissions, channels, expiries), so `RouteCache` entries filled before it stop answering.
    private(set) var generation: UInt64 = 0

    var count: Int { slotByTuple.count }
    var isEmpty: Bool { slotByTuple.isEmpty }
    var keys: Dictionary<FiveTuple, Int>.Keys { slotByTuple.keys }

    func slot(of tuple: FiveTuple) -> Int? { slotByTuple[tuple] }

    /// The allocation of a 5-tuple; setting nil removes it and frees its slot.
    subscript(tuple: FiveTuple) -> Allocation? {
        _read {
            if let i = slotByTuple[tuple] { yield slots[i] } else { yield nil }
        }
        set {
            generation &+= 1
            if let i = slotByTuple[tuple] {
                slots[i] = newValue
                if newValue == nil {
                    slotByTuple[tuple] = nil
                    freeSlots.append(i)
                }
            } else if let newValue {
                let i: Int
                if let reused = freeSlots.popLast() {
                    i = reused
                } else {
                    i = slots.count
                    slots.append(nil)
                }
                slots[i] = newValue
                slotByTuple[tuple] = i
            }
        }
        _modify {
            generation &+= 1
            guard let i = slotByTuple[tuple] else {
                var inserted: Allocation?
                yield &inserted
                if let inserted { self[tuple] = inserted }
                return
            }
            // Move the value out so the yield holds the only reference to its tables.
            var value: Allocation?
            swap(&value, &slots[i])
            defer {
                slots[i] = value
                if value == nil {
                    slotByTuple[tuple] = nil
                    freeSlots.append(i)
                }
            }
            yield &value
        }
    }

    /// The allocation in `slot`, if the slot is in use.
    subscript(slot slot: Int) -> Allocation? {
        _read {
            if slot >= 0 && slot < slots.count { yield slots[slot] } else { yield nil }
        }
        _modify {
            // Only counters, budgets and the expiry bookkeeping are written through here: never an
            // addition or removal, nor a permission or channel (`RouteCache` would not notice).
            precondition(slot >= 0 && slot < slots.count, "slot \(slot) out of range")
            yield &slots[slot]
        }
    }

    // The data path's and the expiry queue's questions, answered on the slot.

    /// The peer bound to `channel` in `slot`, when the binding and its permission are current.
    func boundPeer(slot: Int, channel: UInt16, now: Instant) -> Endpoint? {
        guard slot < slots.count else { return nil }
        return slots[slot]?.boundPeer(channel, now: now)
    }

    /// Whether the allocation in `slot` lets `peer` in.
    func permits(slot: Int, peer: Endpoint, now: Instant) -> Bool {
        slot >= 0 && slot < slots.count && slots[slot]?.permits(peer, now: now) == true
    }

    /// The channel bound to `peer` in `slot`, when current.
    func channel(slot: Int, for peer: Endpoint, now: Instant) -> UInt16? {
        guard slot < slots.count else { return nil }
        return slots[slot]?.channel(for: peer, now: now)
    }

    /// Until when `channel` routes to `peer` in `slot`: the earlier of the binding's and the
    /// permission's expiry (what `RouteCache` may rely on).
    func routeExpiry(slot: Int, channel: UInt16, peer: Endpoint) -> Instant? {
        guard slot >= 0 && slot < slots.count, let a = slots[slot], let c = a.channels[channel], c.peer == peer,
              let permission = a.permissions[peer.address.unmapped] else { return nil }
        return min(c.expires, permission)
    }

    /// The earliest expiry of the allocation in `slot` (`Allocation.earliestExpiry`), read field by field.
    func earliestExpiry(slot: Int) -> Instant? {
        guard slot >= 0 && slot < slots.count, let expires = slots[slot]?.expires else { return nil }
        return Allocation.earliestExpiry(expires: expires, permissions: slots[slot]!.permissions,
                                         channels: slots[slot]!.channels)
    }

    /// The instant the allocation in `slot` is queued for in `ExpiryQueue`.
    func scheduledExpiry(slot: Int) -> Instant? {
        guard slot >= 0 && slot < slots.count else { return nil }
        return slots[slot]?.scheduledExpiry
    }

    /// The user, key and verified NONCE of the allocation of `tuple`: what a request
    /// on an existing allocation has already proved (`TURNServer.authenticate`).
    func credentials(of tuple: FiveTuple) -> (user: String, key: STUNIntegrityKey, nonce: String)? {
        guard let i = slotByTuple[tuple], let user = slots[i]?.user, let key = slots[i]?.key,
              let nonce = slots[i]?.verifiedNonce else { return nil }
        return (user, key, nonce)
    }

    /// The 5-tuple of the allocation in `slot`.
    func tuple(slot: Int) -> FiveTuple? {
        guard slot >= 0 && slot < slots.count else { return nil }
        return slots[slot]?.tuple
    }

    @discardableResult
    mutating func removeValue(forKey tuple: FiveTuple) -> Allocation? {
        guard let value = self[tuple] else { return nil }
        self[tuple] = nil
        return value
    }
}
