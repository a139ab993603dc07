// NAT behaviour for UDP, RFC 4787: how a NAT reuses a mapping (§4.1) and which inbound
// datagrams it lets through (§5). The classic names (full cone, restricted cone, port
// restricted cone, symmetric — RFC 3489 §5) are the usual combinations of the two.

/// How a mapping or a filter depends on the remote endpoint (RFC 4787 §4.1, §5).
public enum NATDependence: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The same for every remote endpoint.
    case endpointIndependent = "endpoint-independent"
    /// Per remote IP address.
    case addressDependent = "address-dependent"
    /// Per remote IP address and port.
    case addressAndPortDependent = "address-and-port-dependent"

    public var description: String { rawValue }
}

/// A NAT's mapping and filtering behaviour.
public struct NATBehavior: Hashable, Sendable, CustomStringConvertible {
    /// When an outbound datagram reuses an existing mapping (RFC 4787 §4.1).
    public var mapping: NATDependence
    /// Which inbound datagrams reach the inside (RFC 4787 §5).
    public var filtering: NATDependence
    /// How long an idle mapping lives (RFC 4787 REQ-5: at least 2 minutes); outbound traffic
    /// refreshes it (REQ-6).
    public var mappingLifetime: Duration

    public init(mapping: NATDependence, filtering: NATDependence, mappingLifetime: Duration = .seconds(120)) {
        self.mapping = mapping
        self.filtering = filtering
        self.mappingLifetime = mappingLifetime
    }

    /// Endpoint-independent mapping and filtering: anyone may send to a mapping.
    public static let fullCone = NATBehavior(mapping: .endpointIndependent, filtering: .endpointIndependent)
    /// Endpoint-independent mapping, address-dependent filtering.
    public static let restrictedCone = NATBehavior(mapping: .endpointIndependent, filtering: .addressDependent)
    /// Endpoint-independent mapping, address-and-port-dependent filtering (RFC 4787 REQ-1 and
    /// the most common home router).
    public static let portRestrictedCone = NATBehavior(mapping: .endpointIndependent,
                                                       filtering: .addressAndPortDependent)
    /// A new mapping per remote endpoint, address-and-port-dependent filtering: what a STUN
    /// server learns is useless to anyone else, so two of these need a relay.
    public static let symmetric = NATBehavior(mapping: .addressAndPortDependent, filtering: .addressAndPortDependent)

    /// The names `--nat` accepts, with their behaviours (nil: no NAT, a public address).
    public static let named: [(String, NATBehavior?)] = [
        ("none", nil), ("full-cone", .fullCone), ("restricted-cone", .restrictedCone),
        ("port-restricted", .portRestrictedCone), ("symmetric", .symmetric),
    ]

    public var description: String {
        Self.named.first { $0.1 == self }?.0 ?? "mapping=\(mapping),filtering=\(filtering)"
    }
}

/// What stands between each peer and the network: a NAT of some behaviour, or none.
public struct NATSetup: Hashable, Sendable, CustomStringConvertible {
    /// Peer A's NAT (nil: A has a public address).
    public var a: NATBehavior?
    /// Peer B's NAT.
    public var b: NATBehavior?

    public init(a: NATBehavior?, b: NATBehavior?) {
        self.a = a
        self.b = b
    }

    /// The same behaviour on both sides.
    public static func both(_ behavior: NATBehavior?) -> NATSetup { NATSetup(a: behavior, b: behavior) }

    /// Whether the two sides can only meet through a relay: both map per remote endpoint.
    /// (Address-dependent mapping on both sides fails the same way; one cone side is enough for
    /// a peer-reflexive path.)
    public var needsRelay: Bool {
        guard let a, let b else { return false }
        return a.mapping != .endpointIndependent && b.mapping != .endpointIndependent
    }

    /// An error in a NAT description.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Parses a name for both sides (`none`, `full-cone`, `restricted-cone`, `port-restricted`,
    /// `symmetric`) or `A/B` with a name for each side (`symmetric/full-cone`).
    public static func parse(_ text: String) throws(ParseError) -> NATSetup {
        let sides = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard sides.count == 1 || sides.count == 2 else {
            throw ParseError(description: "NAT '\(text)': give one name or A/B")
        }
        func behavior(_ name: String) throws(ParseError) -> NATBehavior? {
            guard let entry = NATBehavior.named.first(where: { $0.0 == name }) else {
                let names = NATBehavior.named.map(\.0).joined(separator: ", ")
                throw ParseError(description: "unknown NAT '\(name)': choose \(names), or A/B for one per side")
            }
            return entry.1
        }
        let a = try behavior(sides[0])
        let b = sides.count == 2 ? try behavior(sides[1]) : a
        return NATSetup(a: a, b: b)
    }

    public var description: String {
        let a = self.a.map(\.description) ?? "none"
        let b = self.b.map(\.description) ?? "none"
        return a == b ? a : "\(a)/\(b)"
    }
}
