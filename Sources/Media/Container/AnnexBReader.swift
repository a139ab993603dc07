// An incremental H.264 Annex B byte-stream reader (ITU-T H.264 Annex B; RFC 6184 §1.3 for NAL
// units): splits the stream at start codes (00 00 01, or 00 00 00 01 whose leading zero belongs
// to the next unit), then groups NAL units into access units (§7.4.1.2.3): a new access unit
// begins at an AUD/SEI/SPS/PPS after a picture's slices, or at a slice whose first_mb_in_slice
// is 0 after slices. Raw H.264 carries no timestamps: access unit n gets pts n in a time base of
// one frame at the configured rate.

/// Reads Annex B incrementally (sans-I/O): `append` bytes and call `next()` until it returns
/// nil; at end of input call `finish()` and drain `next()` for the last access unit.
public struct AnnexBReader: Sendable {
    /// The time base of the access units' pts: one tick per frame at the configured rate.
    public let timebase: Timebase
    /// A NAL unit larger than this is rejected as absurd.
    public var maxNALUnitSize: Int

    private enum ScanState: Sendable {
        /// Before the first start code: only zero bytes may come first.
        case preamble
        /// Inside a NAL unit whose payload begins at `payloadStart` (relative to the buffer
        /// head, where its start code begins); bytes before `scanned` hold no start code.
        case inNAL(payloadStart: Int, scanned: Int)
    }

    private var input = InputBuffer()
    private var scan = ScanState.preamble
    private var ended = false
    private var pending: [H264NALUnit] = []
    private var pendingBytes: [UInt8] = []
    private var pendingHasVCL = false
    private var ready: [H264AccessUnit] = []
    private var readyHead = 0
    private var count: Int64 = 0

    /// A reader for a stream at `frameRate` frames per `per` seconds (30/1, 30000/1001, …).
    public init(frameRate: UInt32 = 30, per seconds: UInt32 = 1, maxNALUnitSize: Int = 16 << 20) {
        precondition(frameRate > 0 && seconds > 0, "a frame rate is positive")
        timebase = Timebase(numerator: seconds, denominator: frameRate)
        self.maxNALUnitSize = maxNALUnitSize
    }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        input.append(bytes)
    }

    /// Declares the end of input; the last NAL unit and access unit then come out of `next()`.
    public mutating func finish() {
        ended = true
    }

    /// The next complete access unit, or nil if more bytes are needed (or the input is over).
    public mutating func next() throws(MediaError) -> H264AccessUnit? {
        while readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
            guard let (nal, raw) = try nextNALUnit() else {
                if ended && !pending.isEmpty { emitPending() ; break }
                return nil
            }
            group(nal, raw: raw)
        }
        defer { readyHead += 1 }
        return ready[readyHead]
    }

    // MARK: Access units

    private mutating func group(_ nal: H264NALUnit, raw: [UInt8]) {
        let boundary = pendingHasVCL && (nal.beginsAccessUnit || nal.startsPicture)
        if boundary { emitPending() }
        pending.append(nal)
        pendingBytes += raw
        if nal.isVCL { pendingHasVCL = true }
    }

    private mutating func emitPending() {
        ready.append(H264AccessUnit(nalUnits: pending, pts: count, bytes: pendingBytes))
        count += 1
        pending = []
        pendingBytes = []
        pendingHasVCL = false
    }

    // MARK: NAL units

    /// The index of the next 00 00 01 at or after `from`, or nil.
    private func findStartCode(from: Int) -> Int? {
        var i = max(from, 0)
        while i + 2 < input.count {
            let b2 = input[i + 2]
            if b2 > 1 { i += 3; continue }  // neither 00 nor 01 here: no start code covers i…i+2
            if b2 == 1 && input[i] == 0 && input[i + 1] == 0 { return i }
            i += 1
        }
        return nil
    }

    /// The next NAL unit and its raw bytes (start code through trailing zeros), or nil.
    private mutating func nextNALUnit() throws(MediaError) -> (H264NALUnit, [UInt8])? {
        while true {
            switch scan {
            case .preamble:
                let found = findStartCode(from: 0)
                // Keep the last three bytes while waiting: they may begin a four-byte start code.
                let limit = found ?? (ended ? input.count : max(0, input.count - 3))
                // Only zero bytes (leading_zero_8bits) may precede the first start code.
                for i in 0..<limit where input[i] != 0 {
                    throw MediaError(.badMagic, at: input.offset + i, "expected an Annex B start code (00 00 01)")
                }
                guard let found else {
                    input.skip(limit)
                    if ended && input.count > 0 {
                        throw MediaError(.truncated, at: input.offset, "the input ends before any start code")
                    }
                    return nil
                }
                let rawStart = found > 0 ? found - 1 : found
                input.skip(rawStart)
                scan = .inNAL(payloadStart: found - rawStart + 3, scanned: found - rawStart + 3)
            case .inNAL(let payloadStart, let scanned):
                let next = findStartCode(from: scanned)
                let end: Int
                var nextRawStart = 0
                if let next {
                    nextRawStart = next > payloadStart && input[next - 1] == 0 ? next - 1 : next
                    end = nextRawStart
                } else if ended {
                    end = input.count
                } else {
                    if input.count - payloadStart > maxNALUnitSize {
                        throw MediaError(.tooLarge, at: input.offset,
                                         "NAL unit exceeds the limit of \(maxNALUnitSize) bytes")
                    }
                    scan = .inNAL(payloadStart: payloadStart, scanned: max(payloadStart, input.count - 2))
                    return nil
                }
                var payloadEnd = end
                while payloadEnd > payloadStart && input[payloadEnd - 1] == 0 { payloadEnd -= 1 }
                let offset = input.offset
                guard payloadEnd > payloadStart else {
                    if next == nil { input.skip(input.count); return nil }  // trailing start code
                    throw MediaError(.malformed, at: offset, "empty NAL unit")
                }
                guard payloadEnd - payloadStart <= maxNALUnitSize else {
                    throw MediaError(.tooLarge, at: offset, "NAL unit exceeds the limit of \(maxNALUnitSize) bytes")
                }
                if input[payloadStart] & 0x80 != 0 {
                    throw MediaError(.malformed, at: offset + payloadStart, "NAL unit forbidden_zero_bit is set")
                }
                let nal = H264NALUnit(bytes: input.bytes(payloadStart..<payloadEnd))
                let raw = input.take(end)
                if let next {
                    let start = next - nextRawStart + 3
                    scan = .inNAL(payloadStart: start, scanned: start)
                } else {
                    scan = .preamble
                }
                return (nal, raw)
            }
        }
    }

    /// Reads a whole stream at once.
    public static func read(_ bytes: [UInt8], frameRate: UInt32 = 30) throws(MediaError) -> [H264AccessUnit] {
        var reader = AnnexBReader(frameRate: frameRate)
        reader.append(bytes)
        reader.finish()
        var out: [H264AccessUnit] = []
        while let au = try reader.next() { out.append(au) }
        return out
    }
}
