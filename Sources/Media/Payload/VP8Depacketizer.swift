// VP8 depacketization (RFC 7741 §4.4–4.5): strip each packet's payload descriptor and join the
// data. The first packet of a frame must have S=1 and PartID=0 (§4.4) and every packet of the
// frame must carry the same PictureID (§4.2); the PictureID of consecutive frames is tracked so
// a receiver can see frames it never got.

/// Joins VP8 payloads into frames.
public struct VP8Depacketizer: RTPDepacketizer {
    /// The PictureID of the last frame depacketized.
    public private(set) var lastPictureID: UInt16?
    /// How many frames the PictureIDs say were skipped between the last two frames.
    public private(set) var missingPictures: Int = 0

    public init() {}

    public func startsFrame(_ payload: [UInt8]) -> Bool {
        (try? VP8PayloadDescriptor.parse(payload))?.0.startsFrame ?? false
    }

    /// Whether a frame's first payload holds a keyframe (the frame tag's P bit is 0, RFC 6386 §9.1).
    public static func isKeyframe(_ firstPayload: [UInt8]) -> Bool {
        guard let (d, n) = try? VP8PayloadDescriptor.parse(firstPayload), d.startsFrame else { return false }
        return isKeyframe(frame: firstPayload[n...])
    }

    /// RFC 7741 §4.3: the VP8 payload header, the first bytes of a frame's first partition, is the
    /// frame tag; its P bit (the lowest bit, RFC 6386 §9.1) is 0 for a keyframe. An empty frame is none.
    static func isKeyframe(frame: ArraySlice<UInt8>) -> Bool {
        guard let tag = frame.first else { return false }
        return tag & 0x01 == 0
    }

    public func isKeyframe(_ frame: [UInt8]) -> Bool { Self.isKeyframe(frame: frame[...]) }

    public mutating func depacketize(_ payloads: [[UInt8]]) throws(MediaError) -> [UInt8] {
        guard !payloads.isEmpty else { throw MediaError(.malformed, "a VP8 frame has at least one packet") }
        var frame: [UInt8] = []
        // Room for every payload at once: a frame's packets are all known before it is put
        // together (an unpaced 720p frame is hundreds of them).
        var room = 0
        for payload in payloads { room &+= payload.count }
        frame.reserveCapacity(room)
        var pictureID: UInt16?
        for (index, payload) in payloads.enumerated() {
            let (d, n) = try VP8PayloadDescriptor.parse(payload)
            if index == 0 {
                guard d.startsFrame else {
                    throw MediaError(.malformed, "a VP8 frame's first packet lacks S=1, PartID=0")
                }
                pictureID = d.pictureID
            } else {
                guard !d.startsFrame else {
                    throw MediaError(.malformed, "VP8 packet \(index) of a frame starts partition 0 again")
                }
                guard d.pictureID == pictureID else {
                    let got = d.pictureID.map(String.init) ?? "none"
                    let want = pictureID.map(String.init) ?? "none"
                    throw MediaError(.malformed, "VP8 packet \(index) has PictureID \(got), the frame has \(want)")
                }
            }
            frame += payload[n...]
        }
        guard !frame.isEmpty else { throw MediaError(.malformed, "a VP8 frame has no data") }
        if let pictureID {
            if let last = lastPictureID {
                let mask: UInt16 = pictureID > 0x7F || last > 0x7F ? 0x7FFF : 0x7F  // 15- or 7-bit IDs
                missingPictures = Int((pictureID &- last &- 1) & mask)
            }
            lastPictureID = pictureID
        }
        return frame
    }
}
