// CRC-32 with the IEEE 802.3 polynomial, the checksum of Ethernet, zlib/gzip, PNG — and of STUN's
// FINGERPRINT attribute (RFC 5389 §15.5: "the CRC-32 of the STUN message up to (but excluding) the
// FINGERPRINT attribute itself, XOR'ed with the 32-bit value 0x5354554e").
//
// Parameters (the "CRC-32" of the Rocksoft model): polynomial x³² + x²⁶ + x²³ + x²² + x¹⁶ + x¹² +
// x¹¹ + x¹⁰ + x⁸ + x⁷ + x⁵ + x⁴ + x² + x + 1 (0x04C11DB7, 0xEDB88320 bit-reversed), input and
// output reflected, register initialised to 0xFFFFFFFF and complemented at the end.
// Check value: CRC-32("123456789") = 0xCBF43926.
//
// The implementation is table-driven "slicing-by-16": sixteen 256-entry tables let each step
// fold 16 input bytes into the register with sixteen independent lookups. Where the CPU has
// carry-less multiplication (PCLMULQDQ), inputs of 16 bytes or more are folded 16 bytes at a time
// by it instead (CDigests), the last few bytes by the tables; both give the same CRC.

#if arch(x86_64) || arch(i386)
import CDigests
#endif

/// A CRC-32 (IEEE 802.3) computation. Start with `CRC32()`, `update` with pieces of the input in
/// order, read `value`; or call `CRC32.checksum(_:)` once.
///
/// The value is zlib's `crc32`: `checksum(b, initial: checksum(a)) == checksum(a + b)`.
public struct CRC32: Sendable, Hashable {
    /// The CRC-32 of everything absorbed so far (0 for no input).
    public private(set) var value: UInt32

    /// A computation that has absorbed no input, or that continues from the CRC `value` of some
    /// earlier input.
    public init(value: UInt32 = 0) { self.value = value }

    /// Absorbs `bytes`, which follow everything absorbed so far.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        value = CRC32.checksum(bytes, initial: value)
    }

    /// Absorbs a collection of bytes, in place when it is contiguous.
    @inlinable
    public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        self = CRC32(value: CRC32.checksum(bytes, initial: value))
    }

    /// The CRC-32 of `bytes` continued from `initial`, the CRC-32 of whatever preceded them
    /// (0 — the default — for none).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, initial: UInt32 = 0) -> UInt32 {
        checksum(bytes, initial: initial, folding: foldsWithCarrylessMultiply)
    }

    /// The same, folding with carry-less multiplication where `folding` says so (the caller having
    /// checked that this CPU can), else by the tables alone.
    static func checksum(_ bytes: UnsafeRawBufferPointer, initial: UInt32, folding: Bool) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return initial }
        var register = ~initial
        var start = 0
        #if arch(x86_64) || arch(i386)
        if folding, bytes.count >= 16 {
            // The shim takes whole 16-byte blocks; the tables take the rest.
            start = bytes.count & ~15
            register = zr_crc32_fold_pclmul(register, base.assumingMemoryBound(to: UInt8.self), start)
        }
        #endif
        guard start < bytes.count else { return ~register }
        return tables.withUnsafeBufferPointer { table in
            ~slicingBy16(register, base + start, bytes.count - start, table.baseAddress!)
        }
    }

    /// Whether this CPU has carry-less multiplication (and SSE4.1), asked of CPUID once per process;
    /// always false off x86.
    static let cpuHasCarrylessMultiply: Bool = {
        #if arch(x86_64) || arch(i386)
        return zr_cpu_has_carryless_multiply() != 0
        #else
        return false
        #endif
    }()

    /// What `checksum` uses: folding where the CPU can, unless `ZONERTC_PORTABLE_DIGESTS=1` turned
    /// the digests' CPU extensions off (`DigestImplementation.portableForced`).
    static let foldsWithCarrylessMultiply = cpuHasCarrylessMultiply && !DigestImplementation.portableForced

    /// The CRC-32 of a collection of bytes continued from `initial`; contiguous collections are
    /// read in place, others through a small stack buffer.
    @inlinable
    public static func checksum<C: Collection>(_ bytes: C, initial: UInt32 = 0) -> UInt32
    where C.Element == UInt8 {
        if let crc = bytes.withContiguousStorageIfAvailable({
            checksum(UnsafeRawBufferPointer($0), initial: initial)
        }) {
            return crc
        }
        var crc = initial
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { chunk in
            var count = 0
            for byte in bytes {
                chunk[count] = byte
                count += 1
                if count == chunk.count {
                    crc = checksum(UnsafeRawBufferPointer(chunk), initial: crc)
                    count = 0
                }
            }
            if count > 0 { crc = checksum(UnsafeRawBufferPointer(start: chunk.baseAddress, count: count), initial: crc) }
        }
        return crc
    }

    /// The reflected polynomial.
    static let polynomial: UInt32 = 0xEDB8_8320

    /// Sixteen 256-entry tables, table k at offset 256·k. Table 0 is the classic byte-at-a-time
    /// table: entry b is the register after shifting byte b through eight bits of division.
    /// Table k maps b to the effect of byte b followed by k zero bytes:
    /// Tₖ[b] = (Tₖ₋₁[b] >> 8) ⊕ T₀[Tₖ₋₁[b] & 0xFF].
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 16 * 256)
        for b in 0..<256 {
            var r = UInt32(b)
            for _ in 0..<8 { r = (r >> 1) ^ (r & 1 == 0 ? 0 : polynomial) }
            t[b] = r
        }
        for k in 1..<16 {
            for b in 0..<256 {
                let previous = t[(k - 1) * 256 + b]
                t[k * 256 + b] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    /// Runs the (already pre-conditioned) register `crc` over `count` bytes at `p`.
    @inline(__always)
    private static func slicingBy16(_ crc: UInt32, _ p: UnsafeRawPointer, _ count: Int, _ t: UnsafePointer<UInt32>) -> UInt32 {
        var crc = crc
        var p = p
        var remaining = count
        @inline(__always) func lookup(_ table: Int, _ byte: UInt32) -> UInt32 {
            t[table &<< 8 | Int(truncatingIfNeeded: byte & 0xFF)]
        }
        // Sixteen bytes per step. The register is XORed into the first four (reflected CRC: the
        // low register byte meets the first input byte); byte j of the block has 15 − j bytes
        // after it, so it is looked up in table 15 − j.
        while remaining >= 16 {
            let w0 = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt32.self)) ^ crc
            let w1 = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            let w2 = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            let w3 = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
            let x0 = lookup(15, w0) ^ lookup(14, w0 &>> 8) ^ lookup(13, w0 &>> 16) ^ lookup(12, w0 &>> 24)
            let x1 = lookup(11, w1) ^ lookup(10, w1 &>> 8) ^ lookup(9, w1 &>> 16) ^ lookup(8, w1 &>> 24)
            let x2 = lookup(7, w2) ^ lookup(6, w2 &>> 8) ^ lookup(5, w2 &>> 16) ^ lookup(4, w2 &>> 24)
            let x3 = lookup(3, w3) ^ lookup(2, w3 &>> 8) ^ lookup(1, w3 &>> 16) ^ lookup(0, w3 &>> 24)
            crc = x0 ^ x1 ^ x2 ^ x3
            p += 16
            remaining &-= 16
        }
        // Four bytes per step the same way, on tables 3…0 (a STUN message's tail is a multiple of four).
        while remaining >= 4 {
            let w = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt32.self)) ^ crc
            crc = lookup(3, w) ^ lookup(2, w &>> 8) ^ lookup(1, w &>> 16) ^ lookup(0, w &>> 24)
            p += 4
            remaining &-= 4
        }
        // The tail, a byte at a time.
        while remaining > 0 {
            crc = (crc &>> 8) ^ lookup(0, crc ^ UInt32(p.load(as: UInt8.self)))
            p += 1
            remaining &-= 1
        }
        return crc
    }
}
