import Foundation
import STUN
import ZoneCore

/// A TURN server (RFC 8656 over UDP, with RFC 5766's classic attributes) and STUN Binding
/// server as a sans-I/O machine: datagrams and time in, datagrams and relay sockets out.
///
/// The driver feeds datagrams that arrive on a listening address (`clientDatagram`) or on a
/// relayed address (`peerDatagram`), calls `timer` at `nextDeadline`, and carries out the actions
/// in order. It holds no protocol state.
public struct TURNServer: Sendable {
    /// What the driver must do.
    public enum Action: Sendable, Equatable {
        /// Send to a client from the listening address `via`.
        case toClient([UInt8], client: Endpoint, via: Endpoint)
        /// Send to a peer from a relayed address.
        case toPeer([UInt8], from: Endpoint, to: Endpoint)
        /// Bind a socket on `relay`, then send `response` to the client. If the bind fails, call
        /// `relayBindFailed(relay:now:)` instead of sending.
        case openRelay(Endpoint, response: [UInt8], client: Endpoint, via: Endpoint)
        /// Close the socket of a relayed address.
        case closeRelay(Endpoint)
        /// Something an operator may want in the log.
        case event(Event)
    }

    /// Log-worthy events.
    public enum Event: Sendable, Equatable {
        case allocated(user: String, client: Endpoint, relay: Endpoint, lifetime: Int)
        case released(user: String, relay: Endpoint, reason: String)
        case refused(client: Endpoint, code: Int, reason: String)
        /// A STUN Binding request answered with the client's address (server-reflexive).
        case binding(client: Endpoint)
        /// The relayed port could not be bound; the allocation moved to another.
        case relayMoved(user: String, from: Endpoint, to: Endpoint)
    }

    /// Everything counted, for the periodic stats line and the benchmark.
    public struct Counters: Sendable, Equatable, Codable {
        public var requests = 0
        public var bindings = 0
        public var allocations = 0
        public var activeAllocations = 0
        public var errors = 0
        /// Requests answered 401/438 because they carried no credentials yet or a stale nonce.
        public var challenges = 0
        /// Requests whose credentials were wrong: unknown user, wrong realm, bad integrity.
        public var authFailures = 0
        public var packetsToPeers = 0
        public var packetsToClients = 0
        public var bytesToPeers = 0
        public var bytesToClients = 0
        /// Dropped: no permission, unknown channel, over the bandwidth quota, malformed.
        public var dropped = 0
        public var malformed = 0

        public init() {}
    }

    /// The channel numbers a client may bind. RFC 8656 §12 allows 0x4000–0x4FFF, but RFC 5766
    /// §11 allowed 0x4000–0x7FFF and classic clients (coturn's `turnutils_uclient`) still pick
    /// from the whole of it, so the server accepts both (first byte 0x40–0x7F, as RFC 5764 §5.1.2).
    public static let channelNumbers: ClosedRange<UInt16> = 0x4000...0x7FFF

    public let configuration: TURNServerConfiguration
    public internal(set) var counters = Counters()
    var allocations = AllocationTable()
    var byRelay: [Endpoint: FiveTuple] = [:]
    var perUser: [String: Int] = [:]
    var usedPorts: Set<UInt16> = []
    /// Ports held by EVEN-PORT's R bit: token → (port, expiry).
    var reservations: [UInt64: (port: UInt16, expires: Instant)] = [:]
    var random: SeededRandom
    var nextPortCursor: UInt16
    var keyCache: [String: STUNIntegrityKey] = [:]
    let nonceMAC: HMAC<SHA1>

    public init(configuration: TURNServerConfiguration, seed: UInt64) {
        self.configuration = configuration
        random = SeededRandom(seed: seed)
        let span = UInt64(configuration.relayPorts.count)
        nextPortCursor = configuration.relayPorts.lowerBound &+ UInt16(truncatingIfNeeded: random.next() % max(span, 1))
        nonceMAC = HMAC<SHA1>(key: configuration.nonceKey)
    }

    public var activeAllocations: Int { allocations.count }

    /// The earliest expiry among allocations, permissions, channels and reservations. Kept up to
    /// date by requests and timers (the only things that change expiries), so the data path, which
    /// asks after every batch, does not walk every allocation.
    public private(set) var nextDeadline: Instant?

    mutating func refreshDeadline() {
        var next: Instant?
        func consider(_ t: Instant) { if next == nil || t < next! { next = t } }
        for a in allocations.values {
            consider(a.expires)
            for e in a.permissions.values { consider(e) }
            for c in a.channels.values { consider(c.expires) }
        }
        for r in reservations.values { consider(r.expires) }
        nextDeadline = next
    }

    /// Removes what has expired.
    public mutating func timer(now: Instant) -> [Action] {
        var actions: [Action] = []
        for tuple in Array(allocations.keys) where allocations[tuple]!.expires <= now {
            actions += release(tuple, reason: "expired")
        }
        for tuple in Array(allocations.keys) {
            allocations[tuple]!.permissions = allocations[tuple]!.permissions.filter { $0.value > now }
            let expired = allocations[tuple]!.channels.filter { $0.value.expires <= now }
            for (number, c) in expired {
                allocations[tuple]!.channels[number] = nil
                allocations[tuple]!.channelByPeer[c.peer] = nil
            }
        }
        for (token, r) in reservations where r.expires <= now {
            reservations[token] = nil
            usedPorts.remove(r.port)
        }
        refreshDeadline()
        return actions
    }

    /// How many ports an allocation tries before the client is told 508.
    static let relayBindAttempts = 8

    /// The driver could not bind a relayed address (another program holds the port). An
    /// allocation whose port was the server's free choice moves to another port (a new
    /// `openRelay`); after `relayBindAttempts` ports, or when EVEN-PORT or a RESERVATION-TOKEN
    /// chose the port, it is withdrawn and the client told 508 Insufficient Capacity.
    public mutating func relayBindFailed(relay: Endpoint, now: Instant) -> [Action] {
        guard let tuple = byRelay[relay], let a = allocations[tuple] else { return [] }
        if a.portIsFree && a.failedBinds + 1 < TURNServer.relayBindAttempts,
           let port = pickPort(even: false, pairFree: false) {
            let moved = Endpoint(address: a.relay.address, port: port)
            usedPorts.insert(port)
            usedPorts.remove(relay.port)
            byRelay[relay] = nil
            byRelay[moved] = tuple
            allocations[tuple]!.relay = moved
            allocations[tuple]!.failedBinds += 1
            let request = STUNMessage(method: .allocate, messageClass: .request,
                                      transactionID: STUNTransactionID(bytes: a.transactionID)
                                          ?? STUNTransactionID(high: 0, low: 0), attributes: [])
            let answer = request.successResponse(attributes: [
                .xorRelayedAddress(moved), .lifetime(seconds: a.grantedSeconds), .xorMappedAddress(tuple.client)])
            guard case .toClient(let bytes, _, _)? = respond(answer, key: a.key, tuple: tuple) else { return [] }
            return [.openRelay(moved, response: bytes, client: tuple.client, via: tuple.server),
                    .event(.relayMoved(user: a.user, from: relay, to: moved))]
        }
        _ = release(tuple, reason: "relay socket failed")
        refreshDeadline()
        counters.errors += 1
        let fake = STUNMessage(method: .allocate, messageClass: .request,
                               transactionID: STUNTransactionID(bytes: a.transactionID)
                                   ?? STUNTransactionID(high: 0, low: 0),
                               attributes: [])
        return [respond(fake.errorResponse(code: 508, reason: "Insufficient Capacity"), key: a.key, tuple: tuple)]
            .compactMap { $0 }
    }

    /// Ends every allocation (daemon shutdown).
    public mutating func releaseAll() -> [Action] {
        defer { refreshDeadline() }
        return Array(allocations.keys).flatMap { release($0, reason: "server stopping") }
    }

    mutating func release(_ tuple: FiveTuple, reason: String) -> [Action] {
        guard let a = allocations.removeValue(forKey: tuple) else { return [] }
        byRelay[a.relay] = nil
        usedPorts.remove(a.relay.port)
        perUser[a.user, default: 1] -= 1
        if perUser[a.user] == 0 { perUser[a.user] = nil }
        counters.activeAllocations = allocations.count
        return [.closeRelay(a.relay), .event(.released(user: a.user, relay: a.relay, reason: reason))]
    }

    /// Encodes a response, with MESSAGE-INTEGRITY when a key is known, and FINGERPRINT.
    func respond(_ message: STUNMessage, key: STUNIntegrityKey?, tuple: FiveTuple) -> Action? {
        var m = message
        if !m.attributes.contains(where: { if case .software = $0 { return true } else { return false } }) {
            m.attributes.append(.software(configuration.software))
        }
        guard let bytes = try? m.encode(key: key, fingerprint: true) else { return nil }
        return .toClient(bytes, client: tuple.client, via: tuple.server)
    }
}
