// The session description of one plain RTP video stream (SDP, RFC 8866), what a receiver such
// as `ffmpeg -i stream.sdp` needs to take the stream without any signaling:
//
//   v=0 / o= / s= / c=IN IP4 <address> / t=0 0
//   m=video <port> RTP/AVP <pt>                 RFC 8866 §5.14
//   a=rtpmap:<pt> VP8/90000                      RFC 8866 §6.6
//   a=fmtp:<pt> packetization-mode=1             RFC 6184 §8.1 (H.264)
//   a=rtcp:<port>                                RFC 3605 (RTCP elsewhere than port + 1)
//   a=rtcp-mux                                   RFC 5761 (RTCP on the RTP port)
//   a=ssrc:<ssrc> cname:<cname>                  RFC 5576
//   a=x-zonertc-format:<container line>          ours: the file's container, see VideoStreamFormat
//   a=x-zonertc-rtp-origin:<timestamp>           ours: the RTP timestamp of pts 0
//   a=x-zonertc-first-sequence:<number>          ours: the first RTP sequence number
//
// Parsing is lenient about what it does not need (other lines, other attributes, CRLF or LF)
// and strict about what it does, with the line number of what is wrong.

/// One video stream's plain-RTP session description.
public struct RTPStreamDescription: Equatable, Sendable {
    /// Where the RTP goes (`c=`).
    public var address: String
    /// The RTP port (`m=`).
    public var port: UInt16
    /// The RTCP port if not port + 1 (`a=rtcp`).
    public var rtcpPort: UInt16?
    /// Whether RTCP shares the RTP port (`a=rtcp-mux`).
    public var rtcpMux: Bool
    public var payloadType: UInt8
    /// The codec, from the `a=rtpmap` encoding name.
    public var codec: VideoCodec
    public var ssrc: UInt32?
    /// The file's container (our attribute), when the sender gave it.
    public var format: VideoStreamFormat?
    /// The RTP timestamp of pts 0 (our attribute), when the sender gave it.
    public var timestampOrigin: UInt32?
    /// The first RTP sequence number (our attribute), when the sender gave it.
    public var firstSequenceNumber: UInt16?

    public init(address: String, port: UInt16, payloadType: UInt8, codec: VideoCodec, rtcpPort: UInt16? = nil,
                rtcpMux: Bool = false, ssrc: UInt32? = nil, format: VideoStreamFormat? = nil,
                timestampOrigin: UInt32? = nil, firstSequenceNumber: UInt16? = nil) {
        self.address = address
        self.port = port
        self.rtcpPort = rtcpPort
        self.rtcpMux = rtcpMux
        self.payloadType = payloadType
        self.codec = codec
        self.ssrc = ssrc
        self.format = format
        self.timestampOrigin = timestampOrigin
        self.firstSequenceNumber = firstSequenceNumber
    }

    /// The port RTCP goes to.
    public var effectiveRTCPPort: UInt16 { rtcpMux ? port : rtcpPort ?? port &+ 1 }

    /// The SDP text (LF line endings, as ffmpeg writes them; both are valid for readers).
    public var text: String {
        let family = address.contains(":") ? "IP6" : "IP4"
        var lines = [
            "v=0",
            "o=- \(ssrc ?? 0) 1 IN \(family) \(address)",
            "s=zonertc media",
            "c=IN \(family) \(address)",
            "t=0 0",
            "m=video \(port) RTP/AVP \(payloadType)",
            "a=rtpmap:\(payloadType) \(codec.encodingName)/\(VideoCodec.clockRate)",
        ]
        if let fmtp = codec.formatParameters { lines.append("a=fmtp:\(payloadType) \(fmtp)") }
        lines += ["a=rtcp-fb:\(payloadType) nack", "a=rtcp-fb:\(payloadType) nack pli"]
        if rtcpMux { lines.append("a=rtcp-mux") } else if let rtcpPort { lines.append("a=rtcp:\(rtcpPort)") }
        if let ssrc { lines.append("a=ssrc:\(ssrc) cname:zonertc") }
        if let format { lines.append("a=x-zonertc-format:\(format.attributeValue)") }
        if let timestampOrigin { lines.append("a=x-zonertc-rtp-origin:\(timestampOrigin)") }
        if let firstSequenceNumber { lines.append("a=x-zonertc-first-sequence:\(firstSequenceNumber)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses an SDP holding (at least) one `m=video` RTP section; the first one is used.
    public init(parsing text: String) throws(RTPStreamDescriptionError) {
        var address: String?
        var port: UInt16?
        var payloadTypes: [UInt8] = []
        var rtpmaps: [UInt8: String] = [:]
        var inVideo = false
        var sawVideo = false
        var rtcpPort: UInt16?
        var rtcpMux = false
        var ssrc: UInt32?
        var format: VideoStreamFormat?
        var origin: UInt32?
        var firstSequence: UInt16?
        var sawVersion = false
        // Swift reads "\r\n" as one Character, a newline like "\n".
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            if line.isEmpty { continue }
            guard line.count >= 2, line.dropFirst().first == "=" else {
                throw RTPStreamDescriptionError(line: number, "'\(line.prefix(40))' is not an SDP line (x=…)")
            }
            let value = String(line.dropFirst(2))
            switch line.first {
            case "v":
                guard value == "0" else { throw RTPStreamDescriptionError(line: number, "SDP version is not 0") }
                sawVersion = true
            case "m":
                // A later media section ends the video section we take.
                if sawVideo { inVideo = false; continue }
                let fields = value.split(separator: " ")
                guard fields.count >= 4 else {
                    throw RTPStreamDescriptionError(line: number, "m= needs media, port, protocol and formats")
                }
                guard fields[0] == "video" else { continue }
                guard fields[2].uppercased().hasPrefix("RTP/") else {
                    throw RTPStreamDescriptionError(line: number, "protocol '\(fields[2])' is not RTP")
                }
                guard let p = UInt16(fields[1].split(separator: "/")[0]), p > 0 else {
                    throw RTPStreamDescriptionError(line: number, "port '\(fields[1])' is not a port number")
                }
                port = p
                for f in fields[3...] {
                    guard let pt = UInt8(f), pt < 128 else {
                        throw RTPStreamDescriptionError(line: number, "format '\(f)' is not an RTP payload type")
                    }
                    payloadTypes.append(pt)
                }
                inVideo = true
                sawVideo = true
            case "c":
                // c= at session level, or in the video section (which then wins).
                guard !sawVideo || inVideo else { continue }
                let fields = value.split(separator: " ")
                guard fields.count == 3, fields[0] == "IN" else {
                    throw RTPStreamDescriptionError(line: number, "c= is not 'IN IP4|IP6 ADDRESS'")
                }
                address = String(fields[2].split(separator: "/")[0])
            case "a" where inVideo:
                let (name, rest) = Self.attribute(value)
                switch name {
                case "rtpmap":
                    let parts = rest.split(separator: " ", maxSplits: 1)
                    guard parts.count == 2, let pt = UInt8(parts[0]) else {
                        throw RTPStreamDescriptionError(line: number, "a=rtpmap is not 'PT NAME/RATE'")
                    }
                    rtpmaps[pt] = String(parts[1].split(separator: "/")[0])
                case "rtcp":
                    guard let p = UInt16(rest.split(separator: " ").first ?? "") else {
                        throw RTPStreamDescriptionError(line: number, "a=rtcp port '\(rest)' is not a port number")
                    }
                    rtcpPort = p
                case "rtcp-mux":
                    rtcpMux = true
                case "ssrc":
                    ssrc = UInt32(rest.split(separator: " ").first ?? "")
                case "x-zonertc-format":
                    do { format = try VideoStreamFormat(attributeValue: rest) } catch {
                        throw RTPStreamDescriptionError(line: number, error.message)
                    }
                case "x-zonertc-rtp-origin":
                    guard let o = UInt32(rest) else {
                        throw RTPStreamDescriptionError(line: number, "x-zonertc-rtp-origin '\(rest)' is not a number")
                    }
                    origin = o
                case "x-zonertc-first-sequence":
                    guard let n = UInt16(rest) else {
                        throw RTPStreamDescriptionError(line: number,
                                                        "x-zonertc-first-sequence '\(rest)' is not a number")
                    }
                    firstSequence = n
                default:
                    break
                }
            default:
                break
            }
        }
        guard sawVersion else { throw RTPStreamDescriptionError(line: 1, "this is not SDP: no v=0 line") }
        guard let port else { throw RTPStreamDescriptionError(line: nil, "no m=video section with RTP") }
        guard let address else { throw RTPStreamDescriptionError(line: nil, "no c= line gives the address") }
        // The first payload type whose codec we know.
        for pt in payloadTypes {
            if let name = rtpmaps[pt], let codec = VideoCodec(encodingName: name) {
                self.init(address: address, port: port, payloadType: pt, codec: codec, rtcpPort: rtcpPort,
                          rtcpMux: rtcpMux, ssrc: ssrc, format: format, timestampOrigin: origin,
                          firstSequenceNumber: firstSequence)
                return
            }
        }
        let names = payloadTypes.map { "\($0)=\(rtpmaps[$0] ?? "no rtpmap")" }.joined(separator: ", ")
        throw RTPStreamDescriptionError(line: nil, "no payload type of a codec this receiver takes (VP8, H264, "
                                        + "X-ZONERTC-GENERIC): \(names)")
    }

    private static func attribute(_ value: String) -> (String, String) {
        guard let colon = value.firstIndex(of: ":") else { return (value, "") }
        return (String(value[..<colon]), String(value[value.index(after: colon)...]))
    }
}

/// An SDP that does not describe a stream this module can receive.
public struct RTPStreamDescriptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 1-based line the problem is on, when it is on one.
    public var line: Int?
    public var reason: String

    public init(line: Int?, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { line.map { "SDP line \($0): \(reason)" } ?? "SDP: \(reason)" }
}
