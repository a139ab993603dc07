// H.264 depacketization, non-interleaved mode (RFC 6184 §5.6, §5.7.1, §5.8): single NAL unit
// packets, STAP-A (each NAL unit behind a 16-bit size) and FU-A (fragments from S to E with one
// NAL type) are turned back into NAL units and written as an Annex B access unit with four-byte
// start codes. STAP-B, MTAP and FU-B belong to the interleaved mode and are refused.

/// Joins H.264 payloads into Annex B access units.
public struct H264Depacketizer: RTPDepacketizer {
    public init() {}

    /// A packet begins an access unit when its first NAL unit does (H.264 §7.4.1.2.3): an AUD,
    /// SEI or parameter set, or a slice whose first_mb_in_slice is 0. For an FU-A that is the
    /// start fragment's reconstructed header and first payload byte; for a STAP-A, its first
    /// aggregated unit.
    public func startsFrame(_ payload: [UInt8]) -> Bool {
        guard let first = payload.first else { return false }
        let nal: H264NALUnit
        switch first & 0x1F {
        case 1...23:
            nal = H264NALUnit(bytes: Array(payload.prefix(2)))
        case H264Packetizer.stapA:
            guard payload.count >= 4 else { return false }
            nal = H264NALUnit(bytes: Array(payload[3..<min(payload.count, 5)]))
        case H264Packetizer.fuA:
            guard payload.count >= 2, payload[1] & 0x80 != 0 else { return false }
            nal = H264NALUnit(bytes: [first & 0xE0 | payload[1] & 0x1F] + payload.dropFirst(2).prefix(1))
        default:
            return false
        }
        return nal.beginsAccessUnit || nal.startsPicture
    }

    /// An access unit a decoder can start at holds an IDR slice (nal_unit_type 5, RFC 6184 §1.3,
    /// H.264 §7.4.1.2.4): read back from the Annex B bytes `depacketize` wrote.
    public func isKeyframe(_ frame: [UInt8]) -> Bool {
        guard let units = try? AnnexBReader.read(frame) else { return false }
        return units.contains(where: \.isKeyframe)
    }

    public mutating func depacketize(_ payloads: [[UInt8]]) throws(MediaError) -> [UInt8] {
        var nalUnits: [H264NALUnit] = []
        var fragments: [UInt8]?  // the NAL unit being reassembled from FU-As
        for (index, payload) in payloads.enumerated() {
            guard let first = payload.first else {
                throw MediaError(.malformed, "H.264 packet \(index) has an empty payload")
            }
            let type = first & 0x1F
            if type != H264Packetizer.fuA && fragments != nil {
                throw MediaError(.malformed, "H.264 packet \(index) interrupts a fragmented NAL unit")
            }
            switch type {
            case 1...23:
                nalUnits.append(H264NALUnit(bytes: payload))
            case H264Packetizer.stapA:
                var i = 1
                while i < payload.count {
                    guard i + 2 <= payload.count else {
                        throw MediaError(.truncated, at: i, "STAP-A NAL unit size is truncated in packet \(index)")
                    }
                    let size = Int(payload[i]) << 8 | Int(payload[i + 1])
                    guard size > 0, i + 2 + size <= payload.count else {
                        throw MediaError(.truncated, at: i,
                                         "STAP-A NAL unit of \(size) bytes does not fit packet \(index)")
                    }
                    nalUnits.append(H264NALUnit(bytes: Array(payload[(i + 2)..<(i + 2 + size)])))
                    i += 2 + size
                }
                if i == 1 { throw MediaError(.malformed, "STAP-A in packet \(index) holds no NAL unit") }
            case H264Packetizer.fuA:
                guard payload.count > 2 else {
                    throw MediaError(.truncated, at: payload.count, "FU-A in packet \(index) has no data")
                }
                let fuHeader = payload[1]
                let isStart = fuHeader & 0x80 != 0, isEnd = fuHeader & 0x40 != 0
                let header = first & 0xE0 | fuHeader & 0x1F
                if isStart {
                    guard fragments == nil else {
                        throw MediaError(.malformed, "FU-A in packet \(index) starts before the previous one ended")
                    }
                    fragments = [header]
                } else {
                    guard let current = fragments, current[0] == header else {
                        throw MediaError(.malformed,
                                         "FU-A in packet \(index) continues no fragmented NAL unit of its type")
                    }
                }
                fragments! += payload[2...]
                if isEnd {
                    nalUnits.append(H264NALUnit(bytes: fragments!))
                    fragments = nil
                }
            default:
                throw MediaError(.unsupported, "H.264 packet type \(type) (interleaved mode) is not supported")
            }
        }
        guard fragments == nil else { throw MediaError(.truncated, "the access unit ends inside an FU-A") }
        guard !nalUnits.isEmpty else { throw MediaError(.malformed, "the access unit holds no NAL unit") }
        return AnnexBWriter.bytes(for: nalUnits)
    }
}
