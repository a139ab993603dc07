// Input buffering and final padding shared by the 64-byte-block Merkle–Damgård hashes:
// SHA-1 and SHA-256 (FIPS 180-4 §5.1.1) and MD5 (RFC 1321 §3.1–3.2). All three pad the same way —
// a single 1 bit, zeros, then the message length in bits as a 64-bit integer filling the block —
// and differ only in the byte order of that length (big-endian for SHA, little-endian for MD5).

/// The not-yet-compressed tail of a message (fewer than 64 bytes) and the total length absorbed.
///
/// Whole blocks are compressed straight from the caller's memory; only a partial block at either
/// end of an `update` is copied here. Storage is inline (no allocation).
struct MDBlockBuffer: Sendable {
    typealias Block = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    private var pending: Block = (0, 0, 0, 0, 0, 0, 0, 0)
    private var pendingCount = 0
    /// Bytes absorbed so far, modulo 2⁶⁴ (FIPS 180-4 limits messages to < 2⁶⁴ bits anyway).
    private var length: UInt64 = 0

    /// Feeds `input` through, calling `compress(blocks, count)` for each run of whole 64-byte blocks.
    @inline(__always)
    mutating func absorb(_ input: UnsafeRawBufferPointer, _ compress: (UnsafeRawPointer, Int) -> Void) {
        guard var source = input.baseAddress, input.count > 0 else { return }
        var remaining = input.count
        length &+= UInt64(truncatingIfNeeded: remaining)

        if pendingCount > 0 {
            let offset = pendingCount
            let take = min(64 - offset, remaining)
            withUnsafeMutableBytes(of: &pending) { bytes in
                (bytes.baseAddress! + offset).copyMemory(from: source, byteCount: take)
            }
            pendingCount = offset + take
            if pendingCount < 64 { return }  // `input` fit entirely in the pending block
            source += take
            remaining -= take
            withUnsafeBytes(of: pending) { compress($0.baseAddress!, 1) }
            pendingCount = 0
        }

        let blocks = remaining >> 6
        if blocks > 0 {
            compress(source, blocks)
            source += blocks << 6
            remaining &= 63
        }
        if remaining > 0 {
            withUnsafeMutableBytes(of: &pending) { bytes in
                bytes.baseAddress!.copyMemory(from: source, byteCount: remaining)
            }
            pendingCount = remaining
        }
    }

    /// Pads the message absorbed so far and compresses the final one or two blocks.
    /// `self` is not changed: the same prefix may be finished more than once.
    @inline(__always)
    func finish(bigEndianLength: Bool, _ compress: (UnsafeRawPointer, Int) -> Void) {
        var tail: (Block, Block) = ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
        let count = pendingCount
        // 1 byte of 0x80 and 8 bytes of length must follow the data: a second block if count > 55.
        let blocks = count < 56 ? 1 : 2
        let bitLength = length &<< 3
        withUnsafeMutableBytes(of: &tail) { tailBytes in
            let base = tailBytes.baseAddress!
            withUnsafeBytes(of: pending) { base.copyMemory(from: $0.baseAddress!, byteCount: count) }
            base.storeBytes(of: 0x80, toByteOffset: count, as: UInt8.self)
            base.storeBytes(
                of: bigEndianLength ? bitLength.bigEndian : bitLength.littleEndian,
                toByteOffset: blocks * 64 - 8, as: UInt64.self)
            compress(UnsafeRawPointer(base), blocks)
        }
    }
}
