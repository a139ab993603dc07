// Source-specific media attributes, RFC 5576: `a=ssrc:<ssrc-id> <attribute>[:<value>]` (§4.1)
// and `a=ssrc-group:<semantics> <ssrc-id> …` (§4.2, FID for RTX per RFC 4588 §8.7); and the
// MediaStream identification `a=msid:<id> [<appdata>]`, RFC 8830 §2.
//
// The parser keeps these lines as `.other` text (a description prints back as it came); these
// readers type them on demand. They come from the remote: an ssrc-id is a decimal in
// 0…4294967295, anything else makes the line unusable and it is skipped, never trusted.

/// One `a=ssrc` line: an attribute of a synchronization source.
public struct SourceAttribute: Hashable, Sendable {
    /// The SSRC the attribute describes.
    public var ssrc: UInt32
    /// The source attribute's name: `cname`, `msid`, `label`, ….
    public var name: String
    /// Its value, when it has one.
    public var value: String?

    /// Reads the value of an `a=ssrc` line; nil when it is not `<ssrc-id> <name>[:<value>]`.
    init?(attributeValue text: String) {
        let bytes = Array(text.utf8)[...]
        let (idText, rest) = SDPGrammar.splitOnce(bytes, at: SDPGrammar.space)
        guard let ssrc = SDPGrammar.decimal(idText, as: UInt32.self), let rest else { return nil }
        let (name, value) = SDPGrammar.splitOnce(rest, at: SDPGrammar.colon)
        guard SDPGrammar.isToken(name) else { return nil }
        self.ssrc = ssrc
        self.name = SDPGrammar.string(name)
        self.value = value.map { SDPGrammar.string($0) }
    }
}

/// One `a=ssrc-group` line: sources that belong together.
public struct SourceGroup: Hashable, Sendable {
    /// `FID` (flow identification: a stream and its RTX), `SIM`, `FEC-FR`, ….
    public var semantics: String
    /// The SSRCs, in order: for FID the original stream first, then its RTX stream.
    public var ssrcs: [UInt32]

    /// Reads the value of an `a=ssrc-group` line; nil unless it is a semantics token followed by
    /// at least one valid ssrc-id.
    init?(attributeValue text: String) {
        let fields = SDPGrammar.fields(Array(text.utf8)[...])
        guard let semantics = fields.first, SDPGrammar.isToken(semantics), fields.count >= 2 else { return nil }
        var ssrcs: [UInt32] = []
        for field in fields.dropFirst() {
            guard let ssrc = SDPGrammar.decimal(field, as: UInt32.self) else { return nil }
            ssrcs.append(ssrc)
        }
        self.semantics = SDPGrammar.string(semantics)
        self.ssrcs = ssrcs
    }
}

/// `a=msid`: the MediaStream and track a section's stream belongs to.
public struct MediaStreamIdentification: Hashable, Sendable {
    /// The MediaStream id (`-` for a track in no stream).
    public var streamID: String
    /// The track id, when given.
    public var trackID: String?

    /// Reads the value of an `a=msid` line; nil unless it is one or two tokens.
    init?(attributeValue text: String) {
        let fields = SDPGrammar.fields(Array(text.utf8)[...])
        guard (1...2).contains(fields.count), fields.allSatisfy({ SDPGrammar.isToken($0) }) else { return nil }
        streamID = SDPGrammar.string(fields[0])
        trackID = fields.count == 2 ? SDPGrammar.string(fields[1]) : nil
    }
}

extension MediaDescription {
    /// The section's well-formed `a=ssrc` lines, in order; malformed ones are left out.
    public var sourceAttributes: [SourceAttribute] {
        attributes.compactMap { attribute in
            guard case .other("ssrc", let value?) = attribute else { return nil }
            return SourceAttribute(attributeValue: value)
        }
    }

    /// The section's well-formed `a=ssrc-group` lines, in order.
    public var sourceGroups: [SourceGroup] {
        attributes.compactMap { attribute in
            guard case .other("ssrc-group", let value?) = attribute else { return nil }
            return SourceGroup(attributeValue: value)
        }
    }

    /// The section's first well-formed `a=msid`.
    public var mediaStreamIdentification: MediaStreamIdentification? {
        attributes.lazy.compactMap { attribute -> MediaStreamIdentification? in
            guard case .other("msid", let value?) = attribute else { return nil }
            return MediaStreamIdentification(attributeValue: value)
        }.first
    }

    /// The SSRCs of the stream the writer of this section sends: the original and its RTX
    /// partner from the first FID group with two distinct sources (RFC 5576 §4.2), else the
    /// first SSRC named on an `a=ssrc` line without RTX; nil when the section names none.
    public var sendingSources: (ssrc: UInt32, retransmissionSSRC: UInt32?)? {
        if let fid = sourceGroups.first(where: {
            $0.semantics.uppercased() == "FID" && $0.ssrcs.count == 2 && $0.ssrcs[0] != $0.ssrcs[1]
        }) {
            return (fid.ssrcs[0], fid.ssrcs[1])
        }
        return sourceAttributes.first.map { ($0.ssrc, nil) }
    }

    /// True when the section has `a=rtcp-rsize`.
    public var allowsReducedSizeRTCP: Bool {
        attributes.contains(flag: .rtcpReducedSize)
    }
}
