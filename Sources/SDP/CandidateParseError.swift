// Errors of the ICE candidate attribute parser (RFC 8839 §5.1 grammar).

/// Why a `candidate:` attribute could not be read.
///
/// `kind` is for code that reacts, `field` and `token` say where the problem is, and
/// `description` puts it all in one line for a person (the input is quoted and cut short,
/// because it comes from a peer).
public struct CandidateParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The text starts with neither `candidate:` nor `a=candidate:`.
        case missingPrefix
        /// The text ended before a required field (`field` says which).
        case missingField
        /// A field's token does not fit its grammar (`field` and `token` say which).
        case invalidField
        /// An extension attribute name with no value after it (`token` is the name).
        case missingExtensionValue
        /// An extension attribute (or `raddr`, `rport`, `tcptype`) given twice.
        case duplicateExtension
    }

    /// The part of the candidate attribute a problem is in.
    public enum Field: String, Hashable, Sendable, CustomStringConvertible {
        /// `foundation`: 1–32 ice-chars.
        case foundation
        /// `component-id`: 1–256.
        case component
        /// `transport`: UDP or TCP.
        case transport
        /// `priority`: a 32-bit unsigned decimal.
        case priority
        /// `connection-address`: an IP address or a host name (mDNS `.local`).
        case connectionAddress = "connection address"
        /// `port`: 0–65535.
        case port
        /// The literal `typ` before the candidate type.
        case typKeyword = "typ keyword"
        /// `cand-type`: host, srflx, prflx or relay.
        case candidateType = "candidate type"
        /// `raddr`: the related address.
        case relatedAddress = "raddr"
        /// `rport`: the related port.
        case relatedPort = "rport"
        /// `tcptype` (RFC 6544): active, passive or so.
        case tcpType = "tcptype"
        /// The `generation` extension.
        case generation
        /// The `ufrag` extension.
        case usernameFragment = "ufrag"
        /// The `network-id` extension.
        case networkID = "network-id"
        /// The `network-cost` extension.
        case networkCost = "network-cost"
        /// Some other extension attribute.
        case `extension`

        public var description: String { rawValue }
    }

    /// What was wrong.
    public var kind: Kind
    /// The field the problem is in, when there is one.
    public var field: Field?
    /// The offending token, when there is one.
    public var token: String?
    /// The whole text that was being parsed.
    public var input: String
    /// The problem in words.
    public var detail: String

    public init(kind: Kind, field: Field?, token: String?, input: String, detail: String) {
        self.kind = kind
        self.field = field
        self.token = token
        self.input = input
        self.detail = detail
    }

    public var description: String {
        "invalid ICE candidate \(SDPGrammar.quoted(input)): " + problem
    }

    /// The field, the token and the detail, without the input (the SDP parser quotes the line).
    var problem: String {
        var text = ""
        if let field { text += "\(field) " }
        if let token { text += "\(SDPGrammar.quoted(token, limit: 60)) " }
        return text + detail
    }
}
