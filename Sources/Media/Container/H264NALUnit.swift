// H.264 NAL units (ITU-T H.264 §7.3.1, §7.4.1.2.3; RFC 6184 §1.3): a one-byte header
// (forbidden_zero_bit, nal_ref_idc, nal_unit_type) followed by the payload.

/// One H.264 NAL unit: the header byte and payload, without start code.
public struct H264NALUnit: Equatable, Sendable {
    /// The NAL unit's bytes, header first.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(!bytes.isEmpty, "a NAL unit has at least its header byte")
        self.bytes = bytes
    }

    /// nal_unit_type (H.264 Table 7-1).
    public var type: UInt8 { bytes[0] & 0x1F }
    /// nal_ref_idc.
    public var referenceIndicator: UInt8 { (bytes[0] >> 5) & 0x03 }

    /// Coded slice NAL units (types 1–5) carry picture data.
    public var isVCL: Bool { (1...5).contains(type) }
    /// An IDR slice (type 5): a decoder can start here.
    public var isIDR: Bool { type == 5 }
    public var isSPS: Bool { type == 7 }
    public var isPPS: Bool { type == 8 }

    /// Whether this slice is the first of a picture: its first_mb_in_slice, the first ue(v) of
    /// the slice header, is 0, whose Exp-Golomb code is the single bit 1 (§9.1).
    public var startsPicture: Bool {
        (type == 1 || type == 2 || type == 5) && bytes.count >= 2 && bytes[1] & 0x80 != 0
    }

    /// Non-VCL units that, after a picture's slices, begin the next access unit (§7.4.1.2.3):
    /// AUD, SEI, SPS, PPS, SPS extension, prefix and reserved types 14–18.
    public var beginsAccessUnit: Bool {
        switch type {
        case 6, 7, 8, 9, 13, 14, 15, 16, 17, 18: true
        default: false
        }
    }
}
