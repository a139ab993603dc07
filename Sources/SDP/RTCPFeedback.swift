// RTCP feedback capabilities, `a=rtcp-fb`, RFC 4585 §4.2 (nack, nack pli, trr-int), RFC 5104
// §7.1 (ccm fir), and the WebRTC extensions goog-remb and transport-cc.

import ZoneCore

/// One feedback message type a receiver understands for a codec: `nack`, `nack pli`,
/// `ccm fir`, `goog-remb`, `transport-cc`, ….
public struct RTCPFeedback: Hashable, Sendable, CustomStringConvertible {
    /// The feedback type: `ack`, `nack`, `ccm`, `trr-int`, `goog-remb`, ….
    public var type: String
    /// The rest of the attribute after the type (`pli`, `fir`, `100`), if any.
    public var parameter: String?

    public init(type: String, parameter: String? = nil) {
        self.type = type
        self.parameter = parameter
    }

    /// Generic NACK: retransmission requests (RFC 4585 §6.2.1).
    public static let nack = RTCPFeedback(type: "nack")
    /// Picture Loss Indication: "send me a key frame" (RFC 4585 §6.3.1).
    public static let pictureLossIndication = RTCPFeedback(type: "nack", parameter: "pli")
    /// Full Intra Request (RFC 5104 §3.5.1).
    public static let fullIntraRequest = RTCPFeedback(type: "ccm", parameter: "fir")

    /// `<type>[ <parameter>]`, as after the payload type in `a=rtcp-fb:<pt> `.
    public var description: String {
        var text = TextBuffer(capacity: 32)
        write(to: &text)
        return text.string
    }

    /// Writes `description` piece by piece (see `SDPOrigin.write(to:)`).
    func write(to text: inout TextBuffer) {
        text.append(type)
        if let parameter {
            text.ascii(" ")
            text.append(parameter)
        }
    }
}
