// H.264 packetization, non-interleaved mode (RFC 6184 §5.6 single NAL unit packets, §5.7.1
// STAP-A, §5.8 FU-A; packetization-mode=1). An access unit (Annex B) is split into NAL units;
// runs of NAL units that fit together (SPS, PPS, SEI, small slices) are aggregated into one
// STAP-A, a NAL unit that fits alone goes as a single NAL unit packet, and one too large is
// fragmented into FU-As. The marker bit is set on the access unit's last packet (§5.1).

/// Cuts H.264 access units (Annex B bytes) into RTP payloads.
public struct H264Packetizer: RTPPacketizer {
    public static let stapA: UInt8 = 24
    public static let fuA: UInt8 = 28

    public let maxPayloadSize: Int

    public init(maxPayloadSize: Int = defaultMaxPayloadSize) {
        precondition(maxPayloadSize > 3, "an FU-A has room for its 2-byte header and data")
        precondition(maxPayloadSize <= 65_535, "STAP-A sizes are 16 bits, and so is a UDP datagram")
        self.maxPayloadSize = maxPayloadSize
    }

    /// The NAL units of an Annex B access unit.
    static func nalUnits(_ frame: [UInt8]) throws(MediaError) -> [H264NALUnit] {
        try AnnexBReader.read(frame).flatMap(\.nalUnits)
    }

    public mutating func packetize(_ frame: [UInt8]) throws(MediaError) -> [RTPPayloadChunk] {
        try packetize(nalUnits: Self.nalUnits(frame))
    }

    /// The payloads for an access unit's NAL units.
    public func packetize(nalUnits: [H264NALUnit]) throws(MediaError) -> [RTPPayloadChunk] {
        guard !nalUnits.isEmpty else { throw MediaError(.malformed, "an H.264 access unit has NAL units") }
        var payloads: [[UInt8]] = []
        var pending: [H264NALUnit] = []  // NAL units waiting to be aggregated
        var pendingSize = 1               // the STAP-A header byte

        func flush() {
            if pending.count == 1 {
                payloads.append(pending[0].bytes)
            } else if pending.count > 1 {
                let f = pending.reduce(UInt8(0)) { $0 | $1.bytes[0] & 0x80 }
                let nri = pending.map { $0.bytes[0] & 0x60 }.max()!
                var stap: [UInt8] = [f | nri | Self.stapA]
                for nal in pending {
                    stap += [UInt8(nal.bytes.count >> 8), UInt8(nal.bytes.count & 0xFF)] + nal.bytes
                }
                payloads.append(stap)
            }
            pending = []
            pendingSize = 1
        }

        for nal in nalUnits {
            if nal.bytes.count > maxPayloadSize {
                flush()
                payloads += fragment(nal)
                continue
            }
            if pendingSize + 2 + nal.bytes.count > maxPayloadSize { flush() }
            if 1 + 2 + nal.bytes.count > maxPayloadSize {
                payloads.append(nal.bytes)  // fits alone, but not inside a STAP-A
                continue
            }
            pending.append(nal)
            pendingSize += 2 + nal.bytes.count
        }
        flush()
        return payloads.enumerated().map { RTPPayloadChunk(payload: $1, marker: $0 == payloads.count - 1) }
    }

    /// FU-A fragments of a NAL unit (RFC 6184 §5.8): the header byte's F and NRI go into the FU
    /// indicator and its type into the FU header; the rest is cut into pieces.
    private func fragment(_ nal: H264NALUnit) -> [[UInt8]] {
        let header = nal.bytes[0]
        let indicator = header & 0xE0 | Self.fuA
        let room = maxPayloadSize - 2
        var out: [[UInt8]] = []
        var start = 1
        while start < nal.bytes.count {
            let end = min(nal.bytes.count, start + room)
            let fuHeader = (start == 1 ? 0x80 : 0) | (end == nal.bytes.count ? 0x40 : 0) | header & 0x1F
            out.append([indicator, fuHeader] + nal.bytes[start..<end])
            start = end
        }
        return out
    }
}
