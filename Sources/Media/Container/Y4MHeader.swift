// The YUV4MPEG2 (Y4M) stream header (no RFC; the format of mjpegtools and ffmpeg's yuv4mpegpipe):
// "YUV4MPEG2" then space-separated tagged parameters ending in "\n" — W width, H height,
// F rate "n:d", I interlacing, A aspect, C colour space, X extensions. Each frame is "FRAME",
// optional parameters, "\n", then the raw planes, whose size follows from W, H and C.

/// A parsed Y4M stream header.
public struct Y4MHeader: Equatable, Sendable {
    public static let signature: [UInt8] = Array("YUV4MPEG2".utf8)
    /// Headers longer than this are rejected as absurd.
    public static let maxLineLength = 4096
    /// Dimensions beyond this are rejected as absurd.
    public static let maxDimension = 16384

    public var width: Int
    public var height: Int
    /// The frame rate numerator and denominator (F; 25:1 when absent — ffmpeg's default).
    public var frameRate: (numerator: UInt32, denominator: UInt32)
    /// The colour space tag (C; "420jpeg" when absent).
    public var colorSpace: String
    /// Every parameter after the signature, in order, for an exact rewrite.
    public var parameters: [String]

    public static func == (l: Y4MHeader, r: Y4MHeader) -> Bool { l.parameters == r.parameters }

    /// A header with the given parameters.
    public init(width: Int, height: Int, frameRate: (UInt32, UInt32) = (30, 1), colorSpace: String = "420jpeg") {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.colorSpace = colorSpace
        parameters = ["W\(width)", "H\(height)", "F\(frameRate.0):\(frameRate.1)", "Ip", "A1:1", "C\(colorSpace)"]
    }

    /// Parses the header line (without its "\n"); `offset` is its position for errors.
    public init(line: [UInt8], offset: Int = 0) throws(MediaError) {
        guard line.starts(with: Self.signature) else {
            throw MediaError(.badMagic, at: offset, "Y4M signature is not 'YUV4MPEG2'")
        }
        let text = String(decoding: line[Self.signature.count...], as: UTF8.self)
        parameters = text.split(separator: " ").map(String.init)
        var width: Int?
        var height: Int?
        frameRate = (25, 1)
        colorSpace = "420jpeg"
        for p in parameters {
            let value = p.dropFirst()
            switch p.first {
            case "W": width = Int(value)
            case "H": height = Int(value)
            case "C": colorSpace = String(value)
            case "F":
                let parts = value.split(separator: ":")
                guard parts.count == 2, let n = UInt32(parts[0]), let d = UInt32(parts[1]), n > 0, d > 0 else {
                    throw MediaError(.malformed, at: offset, "Y4M frame rate '\(p)' is not n:d")
                }
                frameRate = (n, d)
            default: break
            }
        }
        guard let width, let height, width > 0, height > 0 else {
            throw MediaError(.malformed, at: offset, "Y4M header lacks a positive W and H")
        }
        guard width <= Self.maxDimension, height <= Self.maxDimension else {
            throw MediaError(.tooLarge, at: offset, "Y4M dimensions \(width)x\(height) exceed \(Self.maxDimension)")
        }
        self.width = width
        self.height = height
        _ = try frameSize(offset: offset)
    }

    /// The time base of frame indices: one tick per frame.
    public var timebase: Timebase { Timebase(numerator: frameRate.denominator, denominator: frameRate.numerator) }

    /// The size in bytes of one frame's planes, from the dimensions and colour space.
    public func frameSize(offset: Int = 0) throws(MediaError) -> Int {
        let luma = width * height
        let halfW = (width + 1) / 2
        let halfH = (height + 1) / 2
        switch colorSpace {
        case "mono": return luma
        case "mono16": return 2 * luma
        case "444alpha": return 4 * luma
        default: break
        }
        // "420jpeg", "420mpeg2", "420paldv", "422", "444", and high-depth "420p10", "444p16", …
        let subsampling = colorSpace.prefix(3)
        let variant = colorSpace.dropFirst(3)
        let bytesPerSample = variant.hasPrefix("p") && variant != "paldv" ? 2 : 1
        let samples: Int
        switch subsampling {
        case "420": samples = luma + 2 * halfW * halfH
        case "422": samples = luma + 2 * halfW * height
        case "411": samples = luma + 2 * ((width + 3) / 4) * height
        case "444": samples = 3 * luma
        default:
            throw MediaError(.unsupported, at: offset, "Y4M colour space '\(colorSpace)' is not supported")
        }
        return samples * bytesPerSample
    }

    /// The header line, "\n" included.
    public func serialized() -> [UInt8] {
        Self.signature + Array(parameters.map { " " + $0 }.joined().utf8) + [0x0A]
    }
}
