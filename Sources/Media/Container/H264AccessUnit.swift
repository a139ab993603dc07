// H.264 access units (ITU-T H.264 §7.4.1.2.3): the NAL units of one picture, with any SPS, PPS,
// SEI or AUD that precede it kept in band.

/// One access unit: its NAL units and the Annex B bytes it occupied in the input.
public struct H264AccessUnit: Equatable, Sendable {
    public var nalUnits: [H264NALUnit]
    /// The bytes of this access unit exactly as the input held them, start codes included (so a
    /// checksum matches ffmpeg's `-c copy -f framemd5` of the same file).
    public var bytes: [UInt8]
    /// The index of the access unit in the stream, in the reader's time base (1 / frame rate).
    public var pts: Int64

    public init(nalUnits: [H264NALUnit], pts: Int64, bytes: [UInt8]? = nil) {
        self.nalUnits = nalUnits
        self.pts = pts
        self.bytes = bytes ?? AnnexBWriter.bytes(for: nalUnits)
    }

    /// Whether the access unit holds an IDR picture.
    public var isKeyframe: Bool { nalUnits.contains(where: \.isIDR) }

    /// The access unit as a container frame.
    public var frame: VideoFrame { VideoFrame(bytes: bytes, pts: pts) }
}
