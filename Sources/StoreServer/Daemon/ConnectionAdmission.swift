import ZoneCore

/// Whether the daemon takes a new connection, and at whose expense: a decision over the
/// connections it holds, kept as an index so the policy is tested on a manual clock and a
/// decision costs the same at 10,000 held connections as at 10.
///
/// A full daemon evicts its longest-idle kept-alive connection rather than refusing the newcomer
/// (held idle sockets would otherwise lock everyone out until their idle timeout), and one address
/// may hold only so many connections. Busy connections (a request in progress, a push stream) are
/// never evicted; when nothing is evictable the newcomer gets 503.
///
/// The driver reports each connection's `idleSince` as it changes (`opened`, `update`, `closed`).
/// Idle spells queue in the order they began, which is the order of their `idleSince`; a spell
/// that ended is skipped when it reaches the front, and the queue is compacted when ended spells
/// outnumber the live ones, so every call is amortised O(1). Only an address at its cap is
/// scanned, and it holds at most `maxPerAddress` connections.
public struct ConnectionAdmission: Sendable {
    public struct Limits: Sendable {
        public var maxConnections = 1024
        /// Connections one client address may hold at once.
        public var maxPerAddress = 256
        /// How long a connection must have been idle before it may be evicted, so a client pausing
        /// between two requests does not lose its connection to a burst of newcomers.
        public var evictableAfterIdle: Duration = .seconds(2)

        public init() {}
    }

    /// One held connection as the decision sees it.
    public struct Held: Sendable {
        public var id: UInt64
        public var address: IPAddress?
        /// See `HTTPServerConnection.idleSince`.
        public var idleSince: Instant?

        public init(id: UInt64, address: IPAddress?, idleSince: Instant?) {
            self.id = id
            self.address = address
            self.idleSince = idleSince
        }
    }

    public enum Decision: Sendable, Equatable {
        case admit
        /// Close this idle connection, then admit.
        case admitEvicting(UInt64)
        /// Answer 503 with this reason and close.
        case refuse(String)
    }

    private struct Spell: Sendable {
        var id: UInt64
        var since: Instant
    }

    public let limits: Limits
    private var held: [UInt64: Held] = [:]
    private var byAddress: [IPAddress: Set<UInt64>] = [:]
    /// Idle spells in the order they began; `spellsHead` is the front.
    private var spells: [Spell] = []
    private var spellsHead = 0
    private var idleCount = 0
    /// Held connections looked at by decisions so far: what a decision costs, for tests.
    public private(set) var examined = 0

    public init(limits: Limits) { self.limits = limits }

    /// An index of `held` (tests): idle spells enter in the order of their `idleSince`.
    public init(limits: Limits, holding connections: [Held]) {
        self.init(limits: limits)
        let ordered = connections.sorted { a, b in
            switch (a.idleSince, b.idleSince) {
            case let (x?, y?): return (x, a.id) < (y, b.id)
            case (nil, _?): return true
            default: return false
            }
        }
        for c in ordered { opened(c) }
    }

    /// Connections held.
    public var count: Int { held.count }

    public mutating func opened(_ connection: Held) {
        held[connection.id] = connection
        if let address = connection.address { byAddress[address, default: []].insert(connection.id) }
        if let since = connection.idleSince { beginSpell(connection.id, since) }
    }

    /// The connection's `idleSince` now (nil while busy).
    public mutating func update(_ id: UInt64, idleSince: Instant?) {
        guard var c = held[id], c.idleSince != idleSince else { return }
        if c.idleSince != nil { idleCount -= 1 }
        c.idleSince = idleSince
        held[id] = c
        if let idleSince { beginSpell(id, idleSince) }
    }

    public mutating func closed(_ id: UInt64) {
        guard let c = held.removeValue(forKey: id) else { return }
        if c.idleSince != nil { idleCount -= 1 }
        if let address = c.address {
            byAddress[address]?.remove(id)
            if byAddress[address]?.isEmpty == true { byAddress[address] = nil }
        }
    }

    public mutating func decide(newcomer address: IPAddress?, now: Instant) -> Decision {
        if let address, let same = byAddress[address], same.count >= limits.maxPerAddress {
            examined += same.count
            var victim: (since: Instant, id: UInt64)?
            for id in same {
                guard let since = held[id]?.idleSince, now - since >= limits.evictableAfterIdle else { continue }
                if victim.map({ (since, id) < ($0.since, $0.id) }) ?? true { victim = (since, id) }
            }
            guard let victim else {
                return .refuse("too many connections from \(address) (\(limits.maxPerAddress))")
            }
            return .admitEvicting(victim.id)
        }
        guard held.count >= limits.maxConnections else { return .admit }
        guard let oldest = oldestIdle(), now - oldest.since >= limits.evictableAfterIdle else {
            return .refuse("too many connections (\(limits.maxConnections)), none of them idle")
        }
        return .admitEvicting(oldest.id)
    }

    private mutating func beginSpell(_ id: UInt64, _ since: Instant) {
        idleCount += 1
        spells.append(Spell(id: id, since: since))
        if spells.count - spellsHead > 64 && spells.count - spellsHead > 2 * idleCount { compact() }
    }

    /// The longest idle connection: the front spell still under way.
    private mutating func oldestIdle() -> Spell? {
        while spellsHead < spells.count {
            let s = spells[spellsHead]
            examined += 1
            if held[s.id]?.idleSince == s.since { return s }
            spellsHead += 1
        }
        return nil
    }

    private mutating func compact() {
        examined += spells.count - spellsHead
        spells = spells[spellsHead...].filter { held[$0.id]?.idleSince == $0.since }
        spellsHead = 0
    }
}
