// The shape shared by every payload format (RFC 3550 §5.1 payload, marker bit per §5.3 and the
// payload format RFCs): a packetizer cuts one frame into RTP payloads, the last marked; a
// depacketizer joins the payloads of one frame, in sequence order, back into the frame.

/// One RTP payload produced by a packetizer.
public struct RTPPayloadChunk: Equatable, Sendable {
    public var payload: [UInt8]
    /// Set on the last payload of a frame (the RTP marker bit for video, RFC 3551 §4.1).
    public var marker: Bool

    public init(payload: [UInt8], marker: Bool) {
        self.payload = payload
        self.marker = marker
    }
}

/// Cuts frames into RTP payloads no larger than a configured size.
public protocol RTPPacketizer: Sendable {
    /// The largest payload (payload-format header included) this packetizer produces.
    var maxPayloadSize: Int { get }
    /// The payloads of one frame, in order; the last has `marker` set.
    mutating func packetize(_ frame: [UInt8]) throws(MediaError) -> [RTPPayloadChunk]
}

/// Joins the payloads of one frame back into the frame, checking the payload format's rules.
public protocol RTPDepacketizer: Sendable {
    /// Whether a payload certainly or probably begins a frame; used only to resume after a loss,
    /// when the packet before it is missing (see `JitterBuffer`).
    func startsFrame(_ payload: [UInt8]) -> Bool
    /// Whether a frame this depacketizer joined can be decoded on its own (a keyframe): a receiver
    /// that joined a stream midway records nothing before one (see `MediaReceiver`).
    func isKeyframe(_ frame: [UInt8]) -> Bool
    /// The frame carried by `payloads` (one frame's packets, in sequence order).
    mutating func depacketize(_ payloads: [[UInt8]]) throws(MediaError) -> [UInt8]
}

/// The default largest RTP payload: 1200 bytes keeps packets under common path MTUs with room
/// for IP, UDP, SRTP and TURN overheads.
public let defaultMaxPayloadSize = 1200
