// The ICE candidate attribute: RFC 8839 §5.1 (grammar, from RFC 5245 §15.1), RFC 6544 §4.5
// (tcptype), RFC 8445 §5.1.2 (priority), and the extensions browsers add (generation, ufrag,
// network-id, network-cost).
import ZoneCore

/// One ICE candidate as carried in SDP (`a=candidate:…`) or trickled on its own (`candidate:…`).
///
/// Parsing accepts what Chrome, Firefox, Safari and aiortc emit: transports and keywords in any
/// case, IPv4, IPv6 and mDNS host names (`<uuid>.local`), and extension attributes in any order.
/// Printing (`description`) gives the canonical form: the fixed fields, then `raddr`, `rport`,
/// `tcptype`, `generation`, `ufrag`, `network-id`, `network-cost`, then unknown extensions in
/// the order they were read. A parsed candidate prints to text that parses to an equal value.
public struct ICECandidate: Hashable, Sendable, CustomStringConvertible {
    /// The transport protocol of the candidate.
    public enum Transport: String, Hashable, Sendable, CustomStringConvertible {
        /// UDP (RFC 8445).
        case udp
        /// TCP (RFC 6544); `tcpType` says which side opens the connection.
        case tcp

        public var description: String { rawValue }
    }

    /// How the candidate was obtained (RFC 8445 §5.1.1).
    public enum CandidateType: String, Hashable, Sendable, CustomStringConvertible {
        /// An address on a local interface (`host`).
        case host
        /// The address a STUN server saw us at (`srflx`).
        case serverReflexive = "srflx"
        /// An address learned from a peer's connectivity check (`prflx`).
        case peerReflexive = "prflx"
        /// An address on a TURN server (`relay`).
        case relay

        public var description: String { rawValue }
    }

    /// The role of a TCP candidate's socket (RFC 6544 §4.5).
    public enum TCPType: String, Hashable, Sendable, CustomStringConvertible {
        /// Opens outgoing connections only.
        case active
        /// Accepts incoming connections only.
        case passive
        /// Simultaneous open (`so`).
        case simultaneousOpen = "so"

        public var description: String { rawValue }
    }

    /// A candidate's address: an IP address, or a host name that hides one (RFC 8839 §5.1 allows
    /// an FQDN; browsers use mDNS names such as `2a7c5f0e-….local` for host candidates).
    public enum Address: Hashable, Sendable, CustomStringConvertible {
        /// A literal IPv4 or IPv6 address.
        case ip(IPAddress)
        /// A host name, kept as written; resolving it is the ICE agent's business.
        case hostname(String)

        /// True for a host name in the mDNS `.local` domain (RFC 6762).
        public var isMDNS: Bool {
            guard case .hostname(let name) = self else { return false }
            let lower = name.lowercased()
            return lower.hasSuffix(".local") || lower.hasSuffix(".local.")
        }

        /// The IP address, or nil for a host name.
        public var ipAddress: IPAddress? {
            guard case .ip(let address) = self else { return nil }
            return address
        }

        public var description: String {
            switch self {
            case .ip(let address): address.description
            case .hostname(let name): name
            }
        }
    }

    /// An extension attribute this type has no field for, kept so the candidate round-trips.
    public struct Extension: Hashable, Sendable {
        /// The attribute name (a token).
        public var name: String
        /// The attribute value (visible characters, no spaces).
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Candidates with the same foundation share type, base and server (RFC 8445 §5.1.1.3).
    public var foundation: String
    /// The component: 1 for RTP (and everything, with rtcp-mux), 2 for RTCP.
    public var component: UInt16
    /// UDP or TCP.
    public var transport: Transport
    /// The candidate's priority (RFC 8445 §5.1.2).
    public var priority: UInt32
    /// Where the candidate receives.
    public var address: Address
    /// The port it receives on.
    public var port: UInt16
    /// host, srflx, prflx or relay.
    public var type: CandidateType
    /// `raddr`: the base of a reflexive candidate or the mapped address of a relayed one.
    /// Browsers print `0.0.0.0` here when the real address is hidden behind mDNS.
    public var relatedAddress: Address?
    /// `rport`: the port of `relatedAddress`.
    public var relatedPort: UInt16?
    /// `tcptype` of a TCP candidate.
    public var tcpType: TCPType?
    /// `generation`: the ICE generation (Chrome; 0 until an ICE restart).
    public var generation: UInt32?
    /// `ufrag`: the username fragment of the ICE generation this candidate belongs to.
    public var usernameFragment: String?
    /// `network-id`: which local network the candidate is on (Chrome).
    public var networkID: UInt32?
    /// `network-cost`: how costly that network is (Chrome; 10 for Ethernet/Wi-Fi, 900 for cellular).
    public var networkCost: UInt32?
    /// Other extension attributes, in the order they were read.
    public var extensions: [Extension]

    public init(
        foundation: String,
        component: UInt16 = 1,
        transport: Transport = .udp,
        priority: UInt32,
        address: Address,
        port: UInt16,
        type: CandidateType,
        relatedAddress: Address? = nil,
        relatedPort: UInt16? = nil,
        tcpType: TCPType? = nil,
        generation: UInt32? = nil,
        usernameFragment: String? = nil,
        networkID: UInt32? = nil,
        networkCost: UInt32? = nil,
        extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.tcpType = tcpType
        self.generation = generation
        self.usernameFragment = usernameFragment
        self.networkID = networkID
        self.networkCost = networkCost
        self.extensions = extensions
    }

    /// The priority RFC 8445 §5.1.2.1 recommends: `2^24·type + 2^8·local + (256 − component)`.
    /// `typePreference` is 0–126 (host 126, prflx 110, srflx 100, relay 0), `localPreference`
    /// 0–65535 and `component` 1–256; larger values are clamped.
    public static func priority(typePreference: UInt32, localPreference: UInt32, component: UInt16) -> UInt32 {
        let type = min(typePreference, 126)
        let local = min(localPreference, 65_535)
        let component = UInt32(min(max(component, 1), 256))
        return type << 24 | local << 8 | (256 - component)
    }

    /// The attribute value with its name, `candidate:…`: the form W3C `RTCIceCandidate.candidate`
    /// and our signaling chunks carry.
    public var description: String {
        // The prefix written into the same buffer as the value.
        var text = TextBuffer(capacity: 128)
        write(to: &text)
        return text.string
    }

    /// Writes `description`.
    public func write(to text: inout TextBuffer) {
        text.ascii("candidate:")
        writeAttributeValue(to: &text)
    }

    /// The attribute value: everything after `candidate:`.
    var attributeValue: String {
        // Written as bytes (`TextBuffer`): every candidate batch the peer signals prints each one.
        var text = TextBuffer(capacity: 128)
        writeAttributeValue(to: &text)
        return text.string
    }

    /// Writes `attributeValue`.
    private func writeAttributeValue(to text: inout TextBuffer) {
        text.append(foundation)
        text.ascii(" ")
        text.decimal(component)
        text.ascii(" ")
        text.append(transport.rawValue)
        text.ascii(" ")
        text.decimal(priority)
        text.ascii(" ")
        text.append(address.description)
        text.ascii(" ")
        text.decimal(port)
        text.ascii(" typ ")
        text.append(type.rawValue)
        if let relatedAddress {
            text.ascii(" raddr ")
            text.append(relatedAddress.description)
        }
        if let relatedPort {
            text.ascii(" rport ")
            text.decimal(relatedPort)
        }
        if let tcpType {
            text.ascii(" tcptype ")
            text.append(tcpType.rawValue)
        }
        if let generation {
            text.ascii(" generation ")
            text.decimal(generation)
        }
        if let usernameFragment {
            text.ascii(" ufrag ")
            text.append(usernameFragment)
        }
        if let networkID {
            text.ascii(" network-id ")
            text.decimal(networkID)
        }
        if let networkCost {
            text.ascii(" network-cost ")
            text.decimal(networkCost)
        }
        for item in extensions {
            text.ascii(" ")
            text.append(item.name)
            text.ascii(" ")
            text.append(item.value)
        }
    }

    /// The SDP line, `a=candidate:…`.
    public var attributeLine: String { "a=" + description }
}
