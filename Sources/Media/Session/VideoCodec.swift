// The codecs a media session can carry and the RTP payload format each uses: VP8 (RFC 7741),
// H.264 packetization-mode 1 (RFC 6184), or our generic format for any other frame (see
// GenericPayload.swift). Video RTP runs on a 90 kHz clock (RFC 3551 §5).

/// What the frames of a stream are, as far as RTP cares.
public enum VideoCodec: String, CaseIterable, Equatable, Hashable, Sendable, CustomStringConvertible {
    case vp8
    case h264
    /// Opaque frames (IVF FourCCs without an RTP format here, raw Y4M pictures).
    case generic

    /// The RTP clock rate of video (RFC 3551 §5).
    public static let clockRate: Int64 = 90_000

    /// The encoding name in an SDP `a=rtpmap` line.
    public var encodingName: String {
        switch self {
        case .vp8: "VP8"
        case .h264: "H264"
        case .generic: "X-ZONERTC-GENERIC"
        }
    }

    /// The codec an `a=rtpmap` encoding name stands for (case-insensitive), nil if unknown.
    public init?(encodingName: String) {
        guard let codec = Self.allCases.first(where: { $0.encodingName.lowercased() == encodingName.lowercased() })
        else { return nil }
        self = codec
    }

    /// The `a=fmtp` parameters a receiver needs, if any.
    public var formatParameters: String? {
        self == .h264 ? "packetization-mode=1" : nil
    }

    public var description: String { encodingName }

    /// A packetizer for this codec's payload format.
    public func packetizer(maxPayloadSize: Int) -> CodecPacketizer {
        switch self {
        case .vp8: .vp8(VP8Packetizer(maxPayloadSize: maxPayloadSize))
        case .h264: .h264(H264Packetizer(maxPayloadSize: maxPayloadSize))
        case .generic: .generic(GenericPacketizer(maxPayloadSize: maxPayloadSize))
        }
    }

    /// A depacketizer for this codec's payload format.
    public func depacketizer() -> CodecDepacketizer {
        switch self {
        case .vp8: .vp8(VP8Depacketizer())
        case .h264: .h264(H264Depacketizer())
        case .generic: .generic(GenericDepacketizer())
        }
    }
}

/// The packetizer of a codec chosen at run time.
public enum CodecPacketizer: RTPPacketizer {
    case vp8(VP8Packetizer)
    case h264(H264Packetizer)
    case generic(GenericPacketizer)

    public var maxPayloadSize: Int {
        switch self {
        case .vp8(let p): p.maxPayloadSize
        case .h264(let p): p.maxPayloadSize
        case .generic(let p): p.maxPayloadSize
        }
    }

    public mutating func packetize(_ frame: [UInt8]) throws(MediaError) -> [RTPPayloadChunk] {
        switch self {
        case .vp8(var p):
            defer { self = .vp8(p) }
            return try p.packetize(frame)
        case .h264(var p):
            defer { self = .h264(p) }
            return try p.packetize(frame)
        case .generic(var p):
            defer { self = .generic(p) }
            return try p.packetize(frame)
        }
    }
}

/// The depacketizer of a codec chosen at run time.
public enum CodecDepacketizer: RTPDepacketizer {
    case vp8(VP8Depacketizer)
    case h264(H264Depacketizer)
    case generic(GenericDepacketizer)

    public func startsFrame(_ payload: [UInt8]) -> Bool {
        switch self {
        case .vp8(let d): d.startsFrame(payload)
        case .h264(let d): d.startsFrame(payload)
        case .generic(let d): d.startsFrame(payload)
        }
    }

    public func isKeyframe(_ frame: [UInt8]) -> Bool {
        switch self {
        case .vp8(let d): d.isKeyframe(frame)
        case .h264(let d): d.isKeyframe(frame)
        case .generic(let d): d.isKeyframe(frame)
        }
    }

    public mutating func depacketize(_ payloads: [[UInt8]]) throws(MediaError) -> [UInt8] {
        switch self {
        case .vp8(var d):
            defer { self = .vp8(d) }
            return try d.depacketize(payloads)
        case .h264(var d):
            defer { self = .h264(d) }
            return try d.depacketize(payloads)
        case .generic(var d):
            defer { self = .generic(d) }
            return try d.depacketize(payloads)
        }
    }
}
