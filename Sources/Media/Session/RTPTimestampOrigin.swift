// Where a sender's RTP clock stands against its frames' pts. RFC 3550 §5.1 starts the RTP
// timestamp at a random value and gives only differences a meaning, so a receiver that must
// write back the sender's exact pts (a file whose first pts is not 0, say) needs one pair of the
// two: the RTP timestamp the sender gave the frame of pts `pts`. It travels as text in the
// sender's SDP (`a=x-zonertc-rtp-origin:RTP [PTS]`, see `attributeValue`); PTS left out means 0,
// the form `RTPStreamDescription` writes.

/// The RTP timestamp of one pts of a stream (its first frame's, in a call).
public struct RTPTimestampOrigin: Equatable, Sendable, CustomStringConvertible {
    /// The RTP timestamp of the frame with pts `pts` (90 kHz clock).
    public var rtpTimestamp: UInt32
    /// The pts, in the stream's time base.
    public var pts: Int64

    public init(rtpTimestamp: UInt32, pts: Int64 = 0) {
        self.rtpTimestamp = rtpTimestamp
        self.pts = pts
    }

    /// The origin of a sender whose pts 0 has RTP timestamp `zero`, taken at `pts` (what
    /// `MediaSender` stamps that frame with: `zero` plus the pts on the RTP clock, wrapping).
    public init(sendingFromZero zero: UInt32, firstPTS pts: Int64, timebase: Timebase) {
        let ticks = timebase.convert(pts, toClockRate: VideoCodec.clockRate)
        self.init(rtpTimestamp: zero &+ UInt32(truncatingIfNeeded: ticks), pts: pts)
    }

    /// `RTP PTS`, decimal: `1234567 30`.
    public var attributeValue: String { "\(rtpTimestamp) \(pts)" }

    /// Parses `RTP` or `RTP PTS` (decimal, RTP 0–4294967295, PTS a signed 64-bit integer).
    public init(attributeValue text: String) throws(MediaError) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...2).contains(words.count) else {
            throw MediaError(.malformed, "RTP origin '\(text.prefix(60))': give RTP-TIMESTAMP [PTS]")
        }
        guard let rtp = UInt32(words[0]) else {
            throw MediaError(.malformed, "RTP origin '\(text.prefix(60))': '\(words[0].prefix(20))' is not an "
                             + "RTP timestamp (0–4294967295)")
        }
        var pts: Int64 = 0
        if words.count == 2 {
            guard let value = Int64(words[1]) else {
                throw MediaError(.malformed, "RTP origin '\(text.prefix(60))': '\(words[1].prefix(24))' is not a pts")
            }
            pts = value
        }
        self.init(rtpTimestamp: rtp, pts: pts)
    }

    public var description: String { "RTP \(rtpTimestamp) at pts \(pts)" }
}
