// A coded video frame as containers store it: opaque bytes and a presentation timestamp.

/// A time base: a timestamp `t` means `t * numerator / denominator` seconds.
public struct Timebase: Equatable, Hashable, Sendable {
    public var numerator: UInt32
    public var denominator: UInt32

    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Converts `pts` in this time base to a clock of `clockRate` ticks per second (90 kHz for
    /// RTP video, RFC 3551 §5), rounding down.
    public func convert(_ pts: Int64, toClockRate clockRate: Int64) -> Int64 {
        guard denominator != 0 else { return 0 }
        let product = pts.multipliedReportingOverflow(by: Int64(numerator) * clockRate)
        return product.overflow ? 0 : product.partialValue / Int64(denominator)
    }
}

/// One coded frame (an IVF frame, an H.264 access unit, a raw Y4M picture).
public struct VideoFrame: Equatable, Sendable {
    /// The frame's bytes exactly as the container holds them.
    public var bytes: [UInt8]
    /// The presentation timestamp in the container's time base.
    public var pts: Int64

    public init(bytes: [UInt8], pts: Int64) {
        self.bytes = bytes
        self.pts = pts
    }
}
