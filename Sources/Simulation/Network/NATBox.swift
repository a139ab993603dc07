// A NAT in front of one inside network, RFC 4787: outbound datagrams get a mapping (reused per
// the mapping behaviour, §4.1), inbound datagrams pass only if the filtering behaviour allows
// (§5), idle mappings expire (REQ-5) and outbound traffic refreshes them (REQ-6). External
// ports are handed out from a seeded start, one per new mapping.
import ZoneCore

/// One NAT: its public address, its mappings and their filters.
struct NATBox {
    /// Which mapping an outbound datagram uses: its inside endpoint, and as much of the remote
    /// endpoint as the mapping behaviour depends on.
    private struct MappingKey: Hashable {
        var inside: Endpoint
        var remoteAddress: IPAddress?
        var remotePort: UInt16?
    }

    private struct Mapping {
        var key: MappingKey
        var inside: Endpoint
        var externalPort: UInt16
        /// Remote addresses and endpoints this mapping has sent to (for filtering).
        var contactedAddresses: Set<IPAddress> = []
        var contactedEndpoints: Set<Endpoint> = []
        var lastOutbound: Instant
    }

    let behavior: NATBehavior
    let publicAddress: IPAddress
    private var byKey: [MappingKey: UInt16] = [:]
    private var byPort: [UInt16: Mapping] = [:]
    private var nextPort: UInt16
    /// Mappings made, inbound datagrams filtered, mappings expired.
    private(set) var mappingsCreated = 0
    private(set) var filtered = 0

    init(behavior: NATBehavior, publicAddress: IPAddress, random: inout SeededRandom) {
        self.behavior = behavior
        self.publicAddress = publicAddress
        nextPort = 20_000 + UInt16(truncatingIfNeeded: random.next() % 20_000)
    }

    /// The external source of an outbound datagram from `inside` to `remote`.
    mutating func outbound(from inside: Endpoint, to remote: Endpoint, now: Instant) -> Endpoint {
        let key: MappingKey
        switch behavior.mapping {
        case .endpointIndependent: key = MappingKey(inside: inside)
        case .addressDependent: key = MappingKey(inside: inside, remoteAddress: remote.address)
        case .addressAndPortDependent: key = MappingKey(inside: inside, remoteAddress: remote.address,
                                                        remotePort: remote.port)
        }
        var port: UInt16
        if let existing = byKey[key], let mapping = byPort[existing], !expired(mapping, now: now) {
            port = existing
        } else {
            if let stale = byKey[key] { byPort[stale] = nil }
            port = allocatePort()
            byKey[key] = port
            byPort[port] = Mapping(key: key, inside: inside, externalPort: port, lastOutbound: now)
            mappingsCreated += 1
        }
        byPort[port]!.lastOutbound = now
        byPort[port]!.contactedAddresses.insert(remote.address)
        byPort[port]!.contactedEndpoints.insert(remote)
        return Endpoint(address: publicAddress, port: port)
    }

    /// The inside endpoint an inbound datagram from `remote` to our `port` goes to, or nil when
    /// no live mapping has that port or the filter refuses the sender.
    mutating func inbound(from remote: Endpoint, toPort port: UInt16, now: Instant) -> Endpoint? {
        guard let mapping = byPort[port], !expired(mapping, now: now) else {
            filtered += 1
            return nil
        }
        let allowed: Bool
        switch behavior.filtering {
        case .endpointIndependent: allowed = true
        case .addressDependent: allowed = mapping.contactedAddresses.contains(remote.address)
        case .addressAndPortDependent: allowed = mapping.contactedEndpoints.contains(remote)
        }
        guard allowed else {
            filtered += 1
            return nil
        }
        return mapping.inside
    }

    private func expired(_ mapping: Mapping, now: Instant) -> Bool {
        now - mapping.lastOutbound > behavior.mappingLifetime
    }

    private mutating func allocatePort() -> UInt16 {
        repeat {
            nextPort = nextPort >= 60_000 ? 20_000 : nextPort + 1
        } while byPort[nextPort] != nil
        return nextPort
    }
}
