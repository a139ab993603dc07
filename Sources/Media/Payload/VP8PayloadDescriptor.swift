// The VP8 payload descriptor (RFC 7741 §4.2):
//
//        0 1 2 3 4 5 6 7
//       |X|R|N|S|R| PID |   X: extensions follow; N: non-reference frame;
//   X:  |I|L|T|K| RSV   |   S: start of partition; PID: partition index
//   I:  |M| PictureID   |   M=1: 15-bit PictureID (second byte follows)
//       |   PictureID   |
//   L:  |   TL0PICIDX   |
//   T/K:|TID|Y| KEYIDX  |

/// A parsed VP8 payload descriptor.
public struct VP8PayloadDescriptor: Equatable, Sendable {
    public var nonReference: Bool
    /// S: this packet begins a VP8 partition.
    public var startOfPartition: Bool
    /// The partition index (0–7).
    public var partitionID: UInt8
    /// The PictureID, 7 or 15 bits, if present.
    public var pictureID: UInt16?
    /// Whether the PictureID is sent in its 15-bit form (M bit).
    public var longPictureID: Bool
    public var tl0PictureIndex: UInt8?
    /// The byte holding TID, Y and KEYIDX, if T or K is set.
    public var temporalKeyByte: UInt8?
    /// Whether T (temporal layer index) and K (KEYIDX) are present in `temporalKeyByte`.
    public var hasTemporalID: Bool
    public var hasKeyIndex: Bool

    public init(startOfPartition: Bool, partitionID: UInt8 = 0, pictureID: UInt16? = nil, longPictureID: Bool = true,
                nonReference: Bool = false) {
        precondition(partitionID < 8, "VP8 PartID is 3 bits")
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionID = partitionID
        self.pictureID = pictureID.map { $0 & (longPictureID ? 0x7FFF : 0x7F) }
        self.longPictureID = longPictureID
        tl0PictureIndex = nil
        temporalKeyByte = nil
        hasTemporalID = false
        hasKeyIndex = false
    }

    /// Whether this packet begins a frame: the start of partition 0 (RFC 7741 §4.4).
    public var startsFrame: Bool { startOfPartition && partitionID == 0 }

    /// Parses the descriptor at the front of `payload`; returns it and its length.
    public static func parse(_ payload: [UInt8]) throws(MediaError) -> (VP8PayloadDescriptor, Int) {
        func byte(_ i: Int) throws(MediaError) -> UInt8 {
            guard i < payload.count else {
                throw MediaError(.truncated, at: i, "VP8 payload descriptor is truncated")
            }
            return payload[i]
        }
        let b0 = try byte(0)
        var d = VP8PayloadDescriptor(startOfPartition: b0 & 0x10 != 0, partitionID: b0 & 0x07,
                                     nonReference: b0 & 0x20 != 0)
        var i = 1
        if b0 & 0x80 != 0 {
            let x = try byte(i)
            i += 1
            if x & 0x80 != 0 {
                let m = try byte(i)
                i += 1
                if m & 0x80 != 0 {
                    d.pictureID = UInt16(m & 0x7F) << 8 | UInt16(try byte(i))
                    d.longPictureID = true
                    i += 1
                } else {
                    d.pictureID = UInt16(m)
                    d.longPictureID = false
                }
            }
            if x & 0x40 != 0 {
                d.tl0PictureIndex = try byte(i)
                i += 1
            }
            if x & 0x30 != 0 {
                d.hasTemporalID = x & 0x20 != 0
                d.hasKeyIndex = x & 0x10 != 0
                d.temporalKeyByte = try byte(i)
                i += 1
            }
        }
        return (d, i)
    }

    /// The descriptor's bytes.
    public func serialized() -> [UInt8] {
        let hasX = pictureID != nil || tl0PictureIndex != nil || temporalKeyByte != nil
        var out: [UInt8] = [(hasX ? 0x80 : 0) | (nonReference ? 0x20 : 0) | (startOfPartition ? 0x10 : 0) | partitionID]
        guard hasX else { return out }
        out.append((pictureID != nil ? 0x80 : 0) | (tl0PictureIndex != nil ? 0x40 : 0)
                   | (hasTemporalID ? 0x20 : 0) | (hasKeyIndex ? 0x10 : 0))
        if let pictureID {
            if longPictureID {
                out += [0x80 | UInt8(pictureID >> 8), UInt8(pictureID & 0xFF)]
            } else {
                out.append(UInt8(pictureID & 0x7F))
            }
        }
        if let tl0PictureIndex { out.append(tl0PictureIndex) }
        if let temporalKeyByte { out.append(temporalKeyByte) }
        return out
    }
}
