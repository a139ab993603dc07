// The virtual UDP network: hosts on links, some behind NATs, joined by a core that adds no
// delay of its own. Sending computes, from the seeded generator, whether and when a datagram
// arrives (the sender's link, then the receiver's); the scheduler carries it; arriving passes
// it through the receiving NAT's filter at that moment. Nothing here knows about STUN or ICE.
import ZoneCore

/// A host of the virtual network.
public struct HostID: Hashable, Sendable, CustomStringConvertible {
    public let index: Int

    public var description: String { "host\(index)" }
}

/// A datagram on its way: from its (public) source to its (public) destination.
public struct Datagram: Sendable {
    public var payload: [UInt8]
    /// The source as the receiver will see it (after the sender's NAT).
    public var source: Endpoint
    /// The destination address on the network (a public address, a NAT's included).
    public var destination: Endpoint
    /// The host it is headed for.
    public var host: HostID
}

/// A datagram that made it: the host it reached, from whom, on which local address.
public struct Arrival: Sendable {
    public var host: HostID
    public var payload: [UInt8]
    public var from: Endpoint
    public var to: Endpoint
}

/// An `Arrival` without its payload (the datagram's, unchanged): a plain value, and so is the
/// `Result` that carries it (the simulator takes one per datagram).
public struct Delivery: Sendable {
    public var host: HostID
    public var from: Endpoint
    public var to: Endpoint
}

/// Why a datagram did not arrive.
public enum DropReason: UInt8, Error, Sendable, CustomStringConvertible {
    /// Lost on a link.
    case lost = 1
    /// No host or NAT owns the destination address (a private address seen from outside).
    case unroutable
    /// A NAT's filter refused it, or no mapping had its port.
    case filtered

    public var description: String {
        switch self {
        case .lost: "lost"
        case .unroutable: "unroutable"
        case .filtered: "filtered"
        }
    }
}

/// Hosts, links and NATs, and the seeded generator that decides each datagram's fate.
public struct VirtualNetwork {
    private struct Host {
        var name: String
        var address: IPAddress
        var link: LinkProfile
        /// The NAT the host sits behind (index into `nats`).
        var nat: Int?
        var uplinkFreeAt: Instant = .zero
        var downlinkFreeAt: Instant = .zero
    }

    private enum Route {
        case host(Int)
        /// A NAT's public address: the host behind it.
        case nat(Int, host: Int)
    }

    /// Datagrams counted by fate.
    public struct Counters: Hashable, Sendable, Codable {
        public var sent = 0
        public var delivered = 0
        public var lost = 0
        public var unroutable = 0
        public var filtered = 0
        public var duplicated = 0
        public var reordered = 0

        public init() {}
    }

    private var hosts: [Host] = []
    private var nats: [NATBox] = []
    /// Where each address leads: a handful of hosts, and every datagram routed twice (sent, then
    /// arriving), so found by comparing addresses (`ShortMap`).
    private var routes = ShortMap<IPAddress, Route>()
    private var random: SeededRandom
    public private(set) var counters = Counters()

    public init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// Adds a host with a public address.
    public mutating func addHost(_ name: String, address: IPAddress, link: LinkProfile) -> HostID {
        hosts.append(Host(name: name, address: address, link: link))
        routes[address] = .host(hosts.count - 1)
        return HostID(index: hosts.count - 1)
    }

    /// Adds a host with a private address behind its own NAT, whose public address is `publicAddress`.
    public mutating func addHost(_ name: String, address: IPAddress, link: LinkProfile, behind behavior: NATBehavior,
                                 publicAddress: IPAddress) -> HostID {
        nats.append(NATBox(behavior: behavior, publicAddress: publicAddress, random: &random))
        hosts.append(Host(name: name, address: address, link: link, nat: nats.count - 1))
        routes[publicAddress] = .nat(nats.count - 1, host: hosts.count - 1)
        return HostID(index: hosts.count - 1)
    }

    /// The host's own (possibly private) address.
    public func address(of host: HostID) -> IPAddress { hosts[host.index].address }

    /// The address the rest of the network sees the host at.
    public func publicAddress(of host: HostID) -> IPAddress {
        hosts[host.index].nat.map { nats[$0].publicAddress } ?? hosts[host.index].address
    }

    public func name(of host: HostID) -> String { hosts[host.index].name }

    /// Mappings each NAT made (in host order of the NATs).
    public var natMappings: [Int] { nats.map(\.mappingsCreated) }

    /// What a sent datagram became: where the copy that will arrive goes and when, and when a
    /// duplicate of it will. A value, not an array: the simulator sends tens of datagrams per call,
    /// nearly none duplicated. Without the payload (the sender has it; the network never changes
    /// it), for the reason `Delivery` has none.
    public struct Copies {
        /// The source as the receiver will see it (after the sender's NAT).
        public var source: Endpoint
        public var destination: Endpoint
        public var host: HostID
        public var at: Instant
        /// When the link's duplicate arrives, if it made one.
        public var duplicateAt: Instant?

        /// The datagram that arrives, carrying `payload` (the sender is done with it).
        public func datagram(carrying payload: consuming [UInt8]) -> Datagram {
            Datagram(payload: payload, source: source, destination: destination, host: host)
        }
    }

    /// Sends `payload` from `from` (an address of `host`) to `to`. Returns the copies that will
    /// arrive — none, one, or two when duplicated — with their arrival instants, or the reason
    /// the datagram was dropped on the way out.
    public mutating func send(_ payload: [UInt8], from: Endpoint, to: Endpoint, host: HostID,
                              now: Instant) -> Result<[(at: Instant, datagram: Datagram)], DropReason> {
        transmit(payload, from: from, to: to, host: host, now: now).map { copies in
            let datagram = copies.datagram(carrying: payload)
            return [(copies.at, datagram)] + (copies.duplicateAt.map { [($0, datagram)] } ?? [])
        }
    }

    /// `send`, its copies described without an array (the simulator's path).
    public mutating func transmit(_ payload: [UInt8], from: Endpoint, to: Endpoint, host: HostID,
                              now: Instant) -> Result<Copies, DropReason> {
        counters.sent += 1
        var source = from
        if let n = hosts[host.index].nat {
            source = nats[n].outbound(from: from, to: to, now: now)
        }
        let receiver: Int
        switch routes[to.address] {
        case .host(let h)?: receiver = h
        case .nat(_, let h)?: receiver = h
        case nil:
            counters.unroutable += 1
            return .failure(.unroutable)
        }
        let bits = Int64(payload.count + 28) * 8  // UDP and IPv4 headers
        let departure = Self.cross(&hosts[host.index], bits: bits, now: now, uplink: true, &random, &counters)
        var arrival: Instant?
        if let departure {
            arrival = Self.cross(&hosts[receiver], bits: bits, now: departure, uplink: false, &random, &counters)
        }
        guard let arrival else {
            counters.lost += 1
            return .failure(.lost)
        }
        var copies = Copies(source: source, destination: to, host: HostID(index: receiver), at: arrival)
        if random.chance(max(hosts[host.index].link.duplicate, hosts[receiver].link.duplicate)) {
            counters.duplicated += 1
            copies.duplicateAt = arrival + .microseconds(Int64(random.next() % 1000) + 1)
        }
        return .success(copies)
    }

    /// The datagram reaches its destination now: through the receiving NAT's filter, to the
    /// host's local address.
    public mutating func arrive(_ datagram: Datagram, now: Instant) -> Result<Arrival, DropReason> {
        deliver(datagram, now: now).map { Arrival(host: $0.host, payload: datagram.payload, from: $0.from, to: $0.to) }
    }

    /// `arrive`, the payload left in the datagram (the simulator's path).
    public mutating func deliver(_ datagram: Datagram, now: Instant) -> Result<Delivery, DropReason> {
        switch routes[datagram.destination.address] {
        case .host(let h)?:
            counters.delivered += 1
            return .success(Delivery(host: HostID(index: h), from: datagram.source, to: datagram.destination))
        case .nat(let n, let h)?:
            guard let inside = nats[n].inbound(from: datagram.source, toPort: datagram.destination.port, now: now)
            else {
                counters.filtered += 1
                return .failure(.filtered)
            }
            counters.delivered += 1
            return .success(Delivery(host: HostID(index: h), from: datagram.source, to: inside))
        case nil:
            counters.unroutable += 1
            return .failure(.unroutable)
        }
    }

    /// One link crossing: the instant the datagram leaves it, or nil when lost. The link
    /// serializes at its rate (queueing behind earlier datagrams), then adds delay and jitter.
    private static func cross(_ host: inout Host, bits: Int64, now: Instant, uplink: Bool,
                              _ random: inout SeededRandom, _ counters: inout Counters) -> Instant? {
        let link = host.link
        if random.chance(link.loss) { return nil }
        var start = now
        if let rate = link.bitsPerSecond {
            let free = uplink ? host.uplinkFreeAt : host.downlinkFreeAt
            start = max(now, free) + .nanoseconds(bits * 1_000_000_000 / Int64(rate))
            if uplink { host.uplinkFreeAt = start } else { host.downlinkFreeAt = start }
        }
        var delay = link.delay
        if link.jitter > .zero {
            delay += .nanoseconds(Int64(Double(link.jitter.nanoseconds) * random.nextUnit()))
        }
        if random.chance(link.reorder) {
            counters.reordered += 1
            delay += link.reorderGap
        }
        return start + delay
    }
}
