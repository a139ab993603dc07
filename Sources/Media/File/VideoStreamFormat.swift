// What a receiver needs to write a stream back into the container it was read from: the
// container and its header fields, the codec, and the time base of the frames' pts. A sender
// passes it along in a line of text (in an SDP attribute, see `attributeValue`), so the file a
// receiver records has the same header and timestamps as the one that was sent.

/// A video file's container with the header values that describe its frames.
public enum VideoContainer: Equatable, Sendable {
    /// IVF with its header (any FourCC).
    case ivf(IVFHeader)
    /// A raw H.264 Annex B byte stream at a nominal frame rate (numerator frames per `per` s).
    case annexB(frameRate: UInt32, per: UInt32)
    /// YUV4MPEG2 with its header.
    case y4m(Y4MHeader)

    /// A short name: `ivf`, `h264`, `y4m`.
    public var name: String {
        switch self {
        case .ivf: "ivf"
        case .annexB: "h264"
        case .y4m: "y4m"
        }
    }
}

/// A stream's container, codec and time base.
public struct VideoStreamFormat: Equatable, Sendable, CustomStringConvertible {
    public var container: VideoContainer

    public init(container: VideoContainer) {
        self.container = container
    }

    /// The codec RTP carries: VP8 for IVF "VP80", H.264 for Annex B or IVF "H264", generic else.
    public var codec: VideoCodec {
        switch container {
        case .ivf(let header):
            if header.fourCC == .vp8 { return .vp8 }
            if header.fourCC == .h264 { return .h264 }
            return .generic
        case .annexB: return .h264
        case .y4m: return .generic
        }
    }

    /// The time base of the frames' pts.
    public var timebase: Timebase {
        switch container {
        case .ivf(let header): header.timebase
        case .annexB(let rate, let per): Timebase(numerator: per, denominator: rate)
        case .y4m(let header): header.timebase
        }
    }

    /// The format a stream is recorded in when its sender named none (a browser or aiortc, which
    /// send no `a=x-zonertc-format`): the codec's own container at the RTP clock's time base,
    /// 1/90000, so a frame's pts is its RTP timestamp minus the first frame's (RFC 3550 §5.1: the
    /// first timestamp is random, only differences mean anything). VP8 goes in IVF, its size
    /// taken from the first keyframe when the file is finished; H.264 in Annex B. Nil for the
    /// generic payload, which has no container of its own.
    public static func recordingRTPClock(of codec: VideoCodec) -> VideoStreamFormat? {
        let rate = UInt32(VideoCodec.clockRate)
        switch codec {
        case .vp8:
            return VideoStreamFormat(container: .ivf(IVFHeader(fourCC: .vp8, width: 0, height: 0, rate: rate,
                                                               scale: 1, frameCount: 0)))
        case .h264:
            return VideoStreamFormat(container: .annexB(frameRate: rate, per: 1))
        case .generic:
            return nil
        }
    }

    /// The RTP clock rate (RFC 3551 §5: 90 kHz for video).
    public var clockRate: Int64 { VideoCodec.clockRate }

    /// One line describing the format, for an SDP attribute (`a=x-zonertc-format:…`):
    /// `ivf VP80 320x240 1/30`, `h264 1/30`, `y4m W32 H24 F30:1 Ip A1:1 C420jpeg`.
    public var attributeValue: String {
        switch container {
        case .ivf(let h): "ivf \(h.fourCC) \(h.width)x\(h.height) \(h.scale)/\(h.rate)"
        case .annexB(let rate, let per): "h264 \(per)/\(rate)"
        case .y4m(let h): "y4m " + h.parameters.joined(separator: " ")
        }
    }

    /// Parses `attributeValue`'s form.
    public init(attributeValue text: String) throws(MediaError) {
        let words = text.split(separator: " ").map(String.init)
        func bad(_ why: String) -> MediaError {
            MediaError(.malformed, "stream format '\(text)': \(why)")
        }
        func timebase(_ word: String) throws(MediaError) -> (UInt32, UInt32) {
            let parts = word.split(separator: "/")
            guard parts.count == 2, let n = UInt32(parts[0]), let d = UInt32(parts[1]), n > 0, d > 0 else {
                throw bad("time base '\(word)' is not N/D")
            }
            return (n, d)
        }
        switch words.first {
        case "ivf":
            guard words.count == 4, words[1].utf8.count == 4 else { throw bad("give ivf FOURCC WxH N/D") }
            let cc = Array(words[1].utf8)
            let size = words[2].split(separator: "x")
            guard size.count == 2, let w = UInt16(size[0]), let h = UInt16(size[1]) else {
                throw bad("size '\(words[2])' is not WxH")
            }
            let (n, d) = try timebase(words[3])
            container = .ivf(IVFHeader(fourCC: FourCC(cc[0], cc[1], cc[2], cc[3]), width: w, height: h,
                                       rate: d, scale: n, frameCount: 0))
        case "h264":
            guard words.count == 2 else { throw bad("give h264 N/D") }
            let (n, d) = try timebase(words[1])
            container = .annexB(frameRate: d, per: n)
        case "y4m":
            let line = Array(("YUV4MPEG2 " + words.dropFirst().joined(separator: " ")).utf8)
            container = .y4m(try Y4MHeader(line: line))
        default:
            throw bad("the container is not ivf, h264 or y4m")
        }
    }

    public var description: String { attributeValue }
}
