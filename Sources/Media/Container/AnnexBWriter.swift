// Writes H.264 Annex B byte streams (ITU-T H.264 Annex B): every NAL unit behind a four-byte
// start code 00 00 00 01, which is valid for any NAL unit and what encoders emit for parameter
// sets and the first unit of an access unit.

/// Serializes NAL units and access units as an Annex B byte stream.
public enum AnnexBWriter {
    public static let startCode: [UInt8] = [0, 0, 0, 1]

    /// NAL units, each behind a four-byte start code.
    public static func bytes(for nalUnits: [H264NALUnit]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(nalUnits.reduce(0) { $0 + 4 + $1.bytes.count })
        for nal in nalUnits {
            out += startCode
            out += nal.bytes
        }
        return out
    }

    /// A stream of access units. With `preservingInput`, each unit's original bytes are written
    /// (byte-identical to the file it was read from); otherwise it is rebuilt from its NAL units.
    public static func write(_ accessUnits: [H264AccessUnit], preservingInput: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        for au in accessUnits { out += preservingInput ? au.bytes : bytes(for: au.nalUnits) }
        return out
    }
}
