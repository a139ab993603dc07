// The one in-memory UDP network of the ICE, TURN and Peer tests: the simulator's own
// `EventScheduler` (a virtual clock; datagrams due at the same instant arrive in the order they
// were sent) carrying datagrams whose fate the simulator's `VirtualNetwork` decides from a seed
// (loss, delay, jitter per link). A host is an IP address, made the first time it sends or is
// sent to; a test's harness says what each arrival means (which machine, which input). Nothing
// sleeps: `run` jumps the clock to the next arrival or deadline.
import Simulation
import ZoneCore

/// A datagram that reached its destination (the simulator's own), so a test needs no
/// `import Simulation` to read one.
public typealias Arrival = Simulation.Arrival

/// Datagrams between endpoints on a virtual clock.
public final class TestNetwork {
    /// A datagram on its way, numbered in sending order.
    private struct InFlight {
        var datagram: Datagram
        var sequence: Int
    }

    private var scheduler: EventScheduler<InFlight>
    private var sent = 0
    private var network: VirtualNetwork
    private var hosts: [IPAddress: HostID] = [:]
    private var links: [IPAddress: LinkProfile] = [:]
    /// The link of every host not given one with `setLink`.
    public let defaultLink: LinkProfile

    /// The latest instant the clock was moved to: a datagram taken late (a harness whose own clock
    /// ran ahead) does not move the clock back.
    private var reached: Instant

    /// The virtual now.
    public var now: Instant { max(scheduler.now, reached) }

    /// The sending order (1, 2, …) of the datagrams that arrived, in arrival order: not sorted
    /// when the network reordered some.
    public private(set) var arrivalOrder: [Int] = []

    /// Datagrams counted by fate (sent, delivered, lost).
    public var counters: VirtualNetwork.Counters { network.counters }

    /// `link` is crossed twice by every datagram, once leaving its sender's host and once reaching
    /// the receiver's (the same host on loopback): a path of latency L is a link of delay L / 2.
    public init(start: Instant, seed: UInt64, link: LinkProfile = .ideal) {
        scheduler = EventScheduler(start: start)
        reached = start
        network = VirtualNetwork(seed: seed)
        defaultLink = link
    }

    /// A link of half the path's delay and jitter, and the loss that makes the two crossings lose
    /// `loss` of the datagrams.
    public static func link(path latency: Duration, jitter: Duration = .zero, loss: Double = 0) -> LinkProfile {
        LinkProfile(delay: latency / 2, jitter: jitter / 2, loss: 1 - (1 - min(max(loss, 0), 1)).squareRoot())
    }

    /// A link that treats datagrams as `spec` says (its seed is not used: the network's seed
    /// decides every draw).
    public static func link(_ spec: ImpairmentSpec) -> LinkProfile { LinkProfile(spec) }

    /// Gives the host at `address` its own link; only before it first sends or is sent to.
    public func setLink(_ link: LinkProfile, for address: IPAddress) {
        precondition(hosts[address] == nil, "the host \(address) is on the network already")
        links[address] = link
    }

    private func host(_ address: IPAddress) -> HostID {
        if let id = hosts[address] { return id }
        let id = network.addHost("\(address)", address: address, link: links[address] ?? defaultLink)
        hosts[address] = id
        return id
    }

    /// Puts a datagram on the network now; false when it was lost on the way.
    @discardableResult
    public func send(_ payload: [UInt8], from: Endpoint, to: Endpoint) -> Bool {
        let sender = host(from.address)
        _ = host(to.address)
        sent += 1
        switch network.send(payload, from: from, to: to, host: sender, now: now) {
        case .success(let copies):
            for copy in copies { scheduler.schedule(InFlight(datagram: copy.datagram, sequence: sent), at: copy.at) }
            return true
        case .failure:
            return false
        }
    }

    /// When the next datagram arrives, if one is on its way.
    public var nextArrival: Instant? { scheduler.nextDue }

    /// The next datagram due at or before `limit`, moving the clock to its instant (if later).
    public func arrival(notAfter limit: Instant) -> Arrival? {
        while let next = scheduler.next(notAfter: limit) {
            if case .success(let arrival) = network.arrive(next.datagram, now: now) {
                arrivalOrder.append(next.sequence)
                return arrival
            }
        }
        return nil
    }

    /// Moves the clock to `instant` (never back).
    public func advance(to instant: Instant) {
        scheduler.advance(to: instant)
        reached = max(reached, instant)
    }

    /// Runs a test world until `condition` holds or `timeout` of virtual time passes; true when it
    /// held. Each round: `drain` the machines' outputs (sending datagrams), check `condition`, move
    /// the clock to the next arrival or `deadline`, hand every datagram due then to `deliver` in
    /// order, then `tick` (feed timers that are due).
    @discardableResult
    public func run(for timeout: Duration, drain: () -> Void, deadline: () -> Instant?,
                    deliver: (Arrival) -> Void, tick: () -> Void, until condition: () -> Bool) -> Bool {
        let end = now + timeout
        var rounds = 0
        while true {
            drain()
            if condition() { return true }
            rounds += 1
            precondition(rounds < 1_000_000, "the test network made no progress")
            var next = nextArrival
            if let d = deadline(), next == nil || d < next! { next = d }
            guard let target = next, target <= end else {
                advance(to: end)
                tick()
                drain()
                return condition()
            }
            advance(to: target)
            while let arrival = arrival(notAfter: now) { deliver(arrival) }
            tick()
        }
    }
}
