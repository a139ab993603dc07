// A session description: RFC 8866 §5 (the lines of a session), with the shape JSEP gives it
// (RFC 8829 §5.2–5.3): one session part, then media sections; BUNDLE (RFC 8843 §7).

/// A parsed or generated session description, with its offer/answer type.
///
/// Session-level lines are typed where this layer understands them and kept as text otherwise,
/// so a description from Chrome, Firefox or aiortc prints back with all its lines
/// (`description`, CRLF line endings). For values that may sit at session or media level (ICE
/// credentials, fingerprints, setup role, direction, end-of-candidates) use the accessors that
/// take a media section: they apply the media-level value first, then the session-level one.
public struct SessionDescription: Hashable, Sendable, CustomStringConvertible {
    /// Offer, provisional answer or answer.
    public var type: SDPType
    /// `o=`.
    public var origin: SDPOrigin
    /// `s=`; JSEP writes `-`.
    public var sessionName: String
    /// A session-level `c=` line (Chrome and Firefox put `c=` in each media section instead).
    public var connection: SDPConnection?
    /// Session-level `b=` lines.
    public var bandwidths: [SDPBandwidth]
    /// `t=` lines; JSEP writes one, `t=0 0`.
    public var timing: [SDPTiming]
    /// `i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=` and lines of unknown types, in printing order.
    public var otherLines: [SDPLine]
    /// Session-level `a=` lines, in order.
    public var attributes: [SDPAttribute]
    /// The media sections, in order.
    public var media: [MediaDescription]

    public init(
        type: SDPType, origin: SDPOrigin, sessionName: String = "-", connection: SDPConnection? = nil,
        bandwidths: [SDPBandwidth] = [], timing: [SDPTiming] = [.unbounded], otherLines: [SDPLine] = [],
        attributes: [SDPAttribute] = [], media: [MediaDescription] = []
    ) {
        self.type = type
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.otherLines = otherLines
        self.attributes = attributes
        self.media = media
    }

    // MARK: Session level

    /// The identification tags of the first `a=group:BUNDLE`, or nil when there is none.
    public var bundleGroup: [String]? {
        groups.first { $0.semantics == "BUNDLE" }?.identifiers
    }

    /// Every `a=group` line, in order.
    public var groups: [(semantics: String, identifiers: [String])] {
        attributes.compactMap {
            if case .group(let semantics, let identifiers) = $0 { (semantics, identifiers) } else { nil }
        }
    }

    /// The session-level ICE credentials, when both ufrag and pwd are given there.
    public var sessionICECredentials: ICECredentials? {
        var ufrag: String?
        var password: String?
        for attribute in attributes {
            switch attribute {
            case .iceUsernameFragment(let text): ufrag = ufrag ?? text
            case .icePassword(let text): password = password ?? text
            default: break
            }
        }
        guard let ufrag, let password else { return nil }
        return ICECredentials(usernameFragment: ufrag, password: password)
    }

    /// True when the session has `a=ice-lite`.
    public var isICELite: Bool {
        attributes.contains(flag: .iceLite)
    }

    /// The first media section whose `a=mid` is `mid`.
    public func media(withMid mid: String) -> MediaDescription? {
        media.first { $0.mid == mid }
    }

    // MARK: Media level, with session-level fallback

    /// The ICE credentials for `section`: its own ufrag and pwd, each falling back to the
    /// session level (RFC 8839 §5.4); nil when either is missing from both.
    public func iceCredentials(for section: MediaDescription) -> ICECredentials? {
        let sessionUfrag = sessionLevel { if case .iceUsernameFragment(let text) = $0 { text } else { nil } }
        let sessionPassword = sessionLevel { if case .icePassword(let text) = $0 { text } else { nil } }
        guard let ufrag = section.iceUsernameFragment ?? sessionUfrag,
            let password = section.icePassword ?? sessionPassword
        else { return nil }
        return ICECredentials(usernameFragment: ufrag, password: password)
    }

    /// The ICE options for `section`: its own, or the session's when it has none.
    public func iceOptions(for section: MediaDescription) -> [String] {
        let own = section.iceOptions
        guard own.isEmpty else { return own }
        return attributes.flatMap { attribute -> [String] in
            if case .iceOptions(let options) = attribute { return options }
            return []
        }
    }

    /// True when `section` or the session has `a=end-of-candidates`.
    public func endOfCandidates(for section: MediaDescription) -> Bool {
        section.hasEndOfCandidates || attributes.contains(flag: .endOfCandidates)
    }

    /// The direction of `section`: its own attribute, else the session's, else sendrecv
    /// (RFC 8866 §6.7).
    public func direction(for section: MediaDescription) -> MediaDirection {
        section.explicitDirection
            ?? sessionLevel { if case .direction(let direction) = $0 { direction } else { nil } }
            ?? .sendReceive
    }

    /// The DTLS role for `section`: its own `a=setup`, else the session's.
    public func setupRole(for section: MediaDescription) -> DTLSSetupRole? {
        section.explicitSetupRole ?? sessionLevel { if case .setup(let role) = $0 { role } else { nil } }
    }

    /// The certificate fingerprints for `section`: its own, or the session's when it has none
    /// (Firefox puts them at session level, Chrome in each section).
    public func fingerprints(for section: MediaDescription) -> [DTLSFingerprint] {
        let own = section.explicitFingerprints
        return own.isEmpty
            ? attributes.compactMap { if case .fingerprint(let fingerprint) = $0 { fingerprint } else { nil } } : own
    }

    /// The first session-level attribute `extract` gives a value for.
    private func sessionLevel<Value>(_ extract: (SDPAttribute) -> Value?) -> Value? {
        attributes.lazy.compactMap(extract).first
    }
}
