import Foundation
import STUN
import ZoneCore

/// A TURN server (RFC 8656 over UDP, with RFC 5766's classic attributes) and STUN Binding
/// server as a sans-I/O machine (`SansIOMachine`): datagrams and time in, datagrams and relay
/// sockets out.
///
/// The driver feeds datagrams that arrive on a listening address (`.clientDatagram`) or on a
/// relayed address (`.peerDatagram`), feeds `.timer` at `nextDeadline`, and carries out what
/// `pollOutput()` hands out, in order. It holds no protocol state. A driver that moves payloads
/// straight from its receive buffers asks `routeClientDatagram`/`routePeerDatagram` first: the
/// same machine's decisions for ChannelData, without an allocation per datagram
/// (`TURNServer+Data.swift`).
public struct TURNServer: Sendable {
    /// What happened.
    public enum Input: Sendable, Equatable {
        /// A datagram arrived from `client` on the listening address `to`: STUN (requests, Send
        /// indications) or ChannelData.
        case clientDatagram([UInt8], from: Endpoint, to: Endpoint)
        /// A datagram arrived from a peer on a relayed address (RFC 8656 §11.3, §12.4).
        case peerDatagram([UInt8], from: Endpoint, relay: Endpoint)
        /// `nextDeadline` has passed: remove what has expired.
        case timer
        /// The driver could not bind the relayed address of an `openRelay` (another program holds
        /// the port); it sent nothing for it.
        case relayBindFailed(Endpoint)
        /// The daemon is stopping: end every allocation.
        case stop
    }

    /// What the driver must do.
    public enum Action: Sendable, Equatable {
        /// Send to a client from the listening address `via`.
        case toClient([UInt8], client: Endpoint, via: Endpoint)
        /// Send to a peer from a relayed address.
        case toPeer([UInt8], from: Endpoint, to: Endpoint)
        /// Bind a socket on `relay`, then send `response` to the client. If the bind fails, feed
        /// `.relayBindFailed(relay)` instead of sending.
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
    /// SOFTWARE (RFC 8489 §14.14) with the configured name, as `respond` adds it to every answer.
    let softwareAttribute: [STUNAttribute]
    /// What `handle` produced and `pollOutput` has not handed out yet; its storage is kept, so the
    /// data path allocates no queue per datagram.
    var outputs = OutputQueue<Action>(capacity: 64)
    /// The data path's recent ChannelData routes (`RouteCache`).
    var routeCache = RouteCache()
    /// Allocations and reservations by the instant they next need the timer (`ExpiryQueue`).
    var expiryQueue = ExpiryQueue()

    public init(configuration: TURNServerConfiguration, seed: UInt64) {
        self.configuration = configuration
        random = SeededRandom(seed: seed)
        let span = UInt64(configuration.relayPorts.count)
        nextPortCursor = configuration.relayPorts.lowerBound &+ UInt16(truncatingIfNeeded: random.next() % max(span, 1))
        nonceMAC = HMAC<SHA1>(key: configuration.nonceKey)
        softwareAttribute = [.software(configuration.software)]
    }

    public var activeAllocations: Int { allocations.count }

    /// The earliest expiry among allocations, permissions, channels and reservations. Kept up to
    /// date by requests and timers (the only things that change expiries) from `expiryQueue`, so
    /// neither a request nor the data path, which asks after every batch, walks every allocation
    /// (`TURNServer+Expiry.swift`).
    public internal(set) var nextDeadline: Instant?

    /// Feeds one input at `now`; its outputs wait in `pollOutput()`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .clientDatagram(let bytes, let client, let server):
            clientDatagram(bytes, from: client, to: server, now: now)
        case .peerDatagram(let bytes, let peer, let relay):
            peerDatagram(bytes, from: peer, relay: relay, now: now)
        case .timer:
            expire(now: now)
        case .relayBindFailed(let relay):
            relayBindFailed(relay: relay, now: now)
        case .stop:
            for tuple in Array(allocations.keys) { release(tuple, reason: "server stopping") }
            refreshDeadline()
        }
    }

    /// The oldest output not yet taken, or nil until the next input.
    public mutating func pollOutput() -> Action? {
        outputs.pop()
    }

    /// How many ports an allocation tries before the client is told 508.
    static let relayBindAttempts = 8

    /// The driver could not bind a relayed address (another program holds the port). An
    /// allocation whose port was the server's free choice moves to another port (a new
    /// `openRelay`); after `relayBindAttempts` ports, or when EVEN-PORT or a RESERVATION-TOKEN
    /// chose the port, it is withdrawn and the client told 508 Insufficient Capacity.
    private mutating func relayBindFailed(relay: Endpoint, now: Instant) {
        guard let tuple = byRelay[relay], let a = allocations[tuple] else { return }
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
            guard case .toClient(let bytes, _, _)? = respond(answer, key: a.key, tuple: tuple) else { return }
            outputs.append(.openRelay(moved, response: bytes, client: tuple.client, via: tuple.server))
            outputs.append(.event(.relayMoved(user: a.user, from: relay, to: moved)))
            return
        }
        // The relayed socket was never opened: nothing to close, only the allocation to forget.
        forget(tuple)
        refreshDeadline()
        counters.errors += 1
        let fake = STUNMessage(method: .allocate, messageClass: .request,
                               transactionID: STUNTransactionID(bytes: a.transactionID)
                                   ?? STUNTransactionID(high: 0, low: 0),
                               attributes: [])
        if let answer = respond(fake.errorResponse(code: 508, reason: "Insufficient Capacity"), key: a.key,
                                tuple: tuple) {
            outputs.append(answer)
        }
    }

    /// Ends an allocation: its relayed socket closes.
    mutating func release(_ tuple: FiveTuple, reason: String) {
        guard let a = forget(tuple) else { return }
        outputs.append(.closeRelay(a.relay))
        outputs.append(.event(.released(user: a.user, relay: a.relay, reason: reason)))
    }

    /// Removes an allocation from every table.
    @discardableResult
    private mutating func forget(_ tuple: FiveTuple) -> Allocation? {
        guard let a = allocations.removeValue(forKey: tuple) else { return nil }
        byRelay[a.relay] = nil
        usedPorts.remove(a.relay.port)
        perUser[a.user, default: 1] -= 1
        if perUser[a.user] == 0 { perUser[a.user] = nil }
        counters.activeAllocations = allocations.count
        return a
    }

    /// Encodes a response, with MESSAGE-INTEGRITY when a key is known, and FINGERPRINT.
    func respond(_ message: STUNMessage, key: STUNIntegrityKey?, tuple: FiveTuple) -> Action? {
        let hasSoftware = message.attributes.contains { if case .software = $0 { true } else { false } }
        // SOFTWARE goes last, from an array made once.
        guard let bytes = try? message.encode(key: key, fingerprint: true,
                                              appending: hasSoftware ? [] : softwareAttribute) else { return nil }
        return .toClient(bytes, client: tuple.client, via: tuple.server)
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension TURNServer: SansIOMachine {}
