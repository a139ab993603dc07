import ZoneCore

/// Whether the daemon takes a new connection, and at whose expense: a pure decision over the
/// connections it holds, so the policy is tested on a manual clock.
///
/// A full daemon evicts its longest-idle kept-alive connection rather than refusing the newcomer
/// (held idle sockets would otherwise lock everyone out until their idle timeout), and one address
/// may hold only so many connections. Busy connections (a request in progress, a push stream) are
/// never evicted; when nothing is evictable the newcomer gets 503.
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

    public let limits: Limits

    public init(limits: Limits) { self.limits = limits }

    public func decide(newcomer address: IPAddress?, held: [Held], now: Instant) -> Decision {
        func oldestIdle(_ candidates: [Held]) -> UInt64? {
            candidates
                .filter { $0.idleSince.map { now - $0 >= limits.evictableAfterIdle } ?? false }
                .min { ($0.idleSince!, $0.id) < ($1.idleSince!, $1.id) }?.id
        }
        if let address {
            let same = held.filter { $0.address == address }
            if same.count >= limits.maxPerAddress {
                guard let victim = oldestIdle(same) else {
                    return .refuse("too many connections from \(address) (\(limits.maxPerAddress))")
                }
                return .admitEvicting(victim)
            }
        }
        guard held.count >= limits.maxConnections else { return .admit }
        guard let victim = oldestIdle(held) else {
            return .refuse("too many connections (\(limits.maxConnections)), none of them idle")
        }
        return .admitEvicting(victim)
    }
}
