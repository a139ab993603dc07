// SHA-1, as specified in FIPS 180-4 ("Secure Hash Standard", August 2015), §6.1.
//
// SHA-1 is broken for collision resistance; ZoneRTC needs it only where protocols mandate it
// (HMAC-SHA1 for STUN MESSAGE-INTEGRITY, RFC 5389 §15.4), where HMAC's security does not rest on
// collision resistance.

#if arch(x86_64) || arch(i386)
import CDigests
#endif

/// The SHA-1 hash function (FIPS 180-4 §6.1): 64-byte blocks, 20-byte digest.
public struct SHA1: HashFunction {
    @inlinable public static var blockSize: Int { 64 }
    @inlinable public static var digestSize: Int { 20 }

    /// The intermediate hash value H⁽ⁱ⁾ (FIPS 180-4 §6.1.2), initially H⁽⁰⁾ from §5.3.1.
    struct State: Sendable {
        var h0: UInt32 = 0x6745_2301
        var h1: UInt32 = 0xEFCD_AB89
        var h2: UInt32 = 0x98BA_DCFE
        var h3: UInt32 = 0x1032_5476
        var h4: UInt32 = 0xC3D2_E1F0
    }

    private var state = State()
    private var buffer = MDBlockBuffer()
    /// The compression function this value runs (chosen when it is made, kept by its copies).
    public let implementation: DigestImplementation

    /// A fresh computation on `DigestImplementation.preferred` (the SHA extensions where the CPU has them).
    public init() { implementation = DigestImplementation.preferred }

    /// A fresh computation on `implementation` if this CPU can run it, else on the portable code.
    public init(implementation: DigestImplementation) {
        self.implementation = DigestImplementation.runnable(implementation)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var state = self.state
        let implementation = self.implementation
        buffer.absorb(bytes) { SHA1.compress(&state, $0, $1, implementation) }
        self.state = state
    }

    public func finalize(into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= SHA1.digestSize, "SHA1.finalize(into:): buffer smaller than 20 bytes")
        var state = self.state
        let implementation = self.implementation
        buffer.finish(bigEndianLength: true) { SHA1.compress(&state, $0, $1, implementation) }
        let out = digest.baseAddress!
        out.storeBytes(of: state.h0.bigEndian, toByteOffset: 0, as: UInt32.self)
        out.storeBytes(of: state.h1.bigEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: state.h2.bigEndian, toByteOffset: 8, as: UInt32.self)
        out.storeBytes(of: state.h3.bigEndian, toByteOffset: 12, as: UInt32.self)
        out.storeBytes(of: state.h4.bigEndian, toByteOffset: 16, as: UInt32.self)
    }

    /// Compresses `count` consecutive 64-byte blocks at `blocks` (any alignment) on `implementation`,
    /// which the caller has checked this CPU can run.
    @inline(__always)
    static func compress(
        _ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int, _ implementation: DigestImplementation
    ) {
        #if arch(x86_64) || arch(i386)
        if implementation == .shaExtensions {
            compressWithSHAExtensions(&state, blocks, count)
            return
        }
        #endif
        compressPortable(&state, blocks, count)
    }

    #if arch(x86_64) || arch(i386)
    /// The same on the SHA extensions (CDigests). The shim takes H₀…H₄ as a C array of 5 words, so
    /// they travel through a homogeneous tuple (contiguous, in order) rather than relying on the
    /// layout of `State`.
    static func compressWithSHAExtensions(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var words = (state.h0, state.h1, state.h2, state.h3, state.h4)
        withUnsafeMutablePointer(to: &words) { tuple in
            tuple.withMemoryRebound(to: UInt32.self, capacity: 5) { h in
                zr_sha1_compress_sha_ni(h, blocks.assumingMemoryBound(to: UInt8.self), count)
            }
        }
        state = State(h0: words.0, h1: words.1, h2: words.2, h3: words.3, h4: words.4)
    }
    #endif

    /// The portable path: runs the SHA-1 compression function (FIPS 180-4 §6.1.2 steps 1–4) over
    /// `count` consecutive 64-byte blocks at `blocks` (any alignment).
    ///
    /// The 80 rounds are written out. Instead of shifting a…e after every round, each round
    /// names them in rotated order; the message schedule Wₜ lives in a 16-word window (w0…w15),
    /// Wₜ for t ≥ 16 overwriting Wₜ₋₁₆ — the alternate method of FIPS 180-4 §6.1.3.
    static func compressPortable(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var h0 = state.h0, h1 = state.h1, h2 = state.h2, h3 = state.h3, h4 = state.h4
        var p = blocks
        for _ in 0..<count {
            var w0 = word(p, 0), w1 = word(p, 1), w2 = word(p, 2), w3 = word(p, 3)
            var w4 = word(p, 4), w5 = word(p, 5), w6 = word(p, 6), w7 = word(p, 7)
            var w8 = word(p, 8), w9 = word(p, 9), w10 = word(p, 10), w11 = word(p, 11)
            var w12 = word(p, 12), w13 = word(p, 13), w14 = word(p, 14), w15 = word(p, 15)
            var a = h0, b = h1, c = h2, d = h3, e = h4

            round1(a, &b, c, d, &e, w0)
            round1(e, &a, b, c, &d, w1)
            round1(d, &e, a, b, &c, w2)
            round1(c, &d, e, a, &b, w3)
            round1(b, &c, d, e, &a, w4)
            round1(a, &b, c, d, &e, w5)
            round1(e, &a, b, c, &d, w6)
            round1(d, &e, a, b, &c, w7)
            round1(c, &d, e, a, &b, w8)
            round1(b, &c, d, e, &a, w9)
            round1(a, &b, c, d, &e, w10)
            round1(e, &a, b, c, &d, w11)
            round1(d, &e, a, b, &c, w12)
            round1(c, &d, e, a, &b, w13)
            round1(b, &c, d, e, &a, w14)
            round1(a, &b, c, d, &e, w15)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1); round1(e, &a, b, c, &d, w0)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1); round1(d, &e, a, b, &c, w1)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1); round1(c, &d, e, a, &b, w2)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1); round1(b, &c, d, e, &a, w3)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1); round2(a, &b, c, d, &e, w4)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1); round2(e, &a, b, c, &d, w5)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1); round2(d, &e, a, b, &c, w6)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1); round2(c, &d, e, a, &b, w7)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1); round2(b, &c, d, e, &a, w8)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1); round2(a, &b, c, d, &e, w9)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1); round2(e, &a, b, c, &d, w10)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1); round2(d, &e, a, b, &c, w11)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1); round2(c, &d, e, a, &b, w12)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1); round2(b, &c, d, e, &a, w13)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1); round2(a, &b, c, d, &e, w14)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1); round2(e, &a, b, c, &d, w15)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1); round2(d, &e, a, b, &c, w0)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1); round2(c, &d, e, a, &b, w1)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1); round2(b, &c, d, e, &a, w2)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1); round2(a, &b, c, d, &e, w3)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1); round2(e, &a, b, c, &d, w4)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1); round2(d, &e, a, b, &c, w5)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1); round2(c, &d, e, a, &b, w6)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1); round2(b, &c, d, e, &a, w7)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1); round3(a, &b, c, d, &e, w8)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1); round3(e, &a, b, c, &d, w9)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1); round3(d, &e, a, b, &c, w10)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1); round3(c, &d, e, a, &b, w11)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1); round3(b, &c, d, e, &a, w12)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1); round3(a, &b, c, d, &e, w13)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1); round3(e, &a, b, c, &d, w14)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1); round3(d, &e, a, b, &c, w15)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1); round3(c, &d, e, a, &b, w0)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1); round3(b, &c, d, e, &a, w1)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1); round3(a, &b, c, d, &e, w2)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1); round3(e, &a, b, c, &d, w3)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1); round3(d, &e, a, b, &c, w4)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1); round3(c, &d, e, a, &b, w5)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1); round3(b, &c, d, e, &a, w6)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1); round3(a, &b, c, d, &e, w7)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1); round3(e, &a, b, c, &d, w8)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1); round3(d, &e, a, b, &c, w9)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1); round3(c, &d, e, a, &b, w10)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1); round3(b, &c, d, e, &a, w11)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1); round4(a, &b, c, d, &e, w12)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1); round4(e, &a, b, c, &d, w13)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1); round4(d, &e, a, b, &c, w14)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1); round4(c, &d, e, a, &b, w15)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1); round4(b, &c, d, e, &a, w0)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1); round4(a, &b, c, d, &e, w1)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1); round4(e, &a, b, c, &d, w2)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1); round4(d, &e, a, b, &c, w3)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1); round4(c, &d, e, a, &b, w4)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1); round4(b, &c, d, e, &a, w5)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1); round4(a, &b, c, d, &e, w6)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1); round4(e, &a, b, c, &d, w7)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1); round4(d, &e, a, b, &c, w8)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1); round4(c, &d, e, a, &b, w9)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1); round4(b, &c, d, e, &a, w10)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1); round4(a, &b, c, d, &e, w11)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1); round4(e, &a, b, c, &d, w12)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1); round4(d, &e, a, b, &c, w13)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1); round4(c, &d, e, a, &b, w14)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1); round4(b, &c, d, e, &a, w15)

            h0 &+= a
            h1 &+= b
            h2 &+= c
            h3 &+= d
            h4 &+= e
            p += 64
        }
        state.h0 = h0
        state.h1 = h1
        state.h2 = h2
        state.h3 = h3
        state.h4 = h4
    }
}

/// Word `i` of the block at `p`, read big-endian (FIPS 180-4 §3.1).
@inline(__always)
private func word(_ p: UnsafeRawPointer, _ i: Int) -> UInt32 {
    UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
}

/// ROTLⁿ(x) (FIPS 180-4 §3.2).
@inline(__always)
private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

// One round (FIPS 180-4 §6.1.2 step 3): T = ROTL⁵(a) + fₜ(b, c, d) + e + Kₜ + Wₜ; e ← T (the
// caller's next round treats it as the new a); b ← ROTL³⁰(b). fₜ and Kₜ per §4.1.1 and §4.2.1.

/// Rounds 0–19: Ch(x, y, z) = (x ∧ y) ⊕ (¬x ∧ z), written z ⊕ (x ∧ (y ⊕ z)).
@inline(__always)
private func round1(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ w: UInt32) {
    e = e &+ rotl(a, 5) &+ (d ^ (b & (c ^ d))) &+ 0x5A82_7999 &+ w
    b = rotl(b, 30)
}

/// Rounds 20–39: Parity(x, y, z) = x ⊕ y ⊕ z.
@inline(__always)
private func round2(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ w: UInt32) {
    e = e &+ rotl(a, 5) &+ (b ^ c ^ d) &+ 0x6ED9_EBA1 &+ w
    b = rotl(b, 30)
}

/// Rounds 40–59: Maj(x, y, z) = (x ∧ y) ⊕ (x ∧ z) ⊕ (y ∧ z), written (x ∧ y) ∨ (z ∧ (x ∨ y)).
@inline(__always)
private func round3(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ w: UInt32) {
    e = e &+ rotl(a, 5) &+ ((b & c) | (d & (b | c))) &+ 0x8F1B_BCDC &+ w
    b = rotl(b, 30)
}

/// Rounds 60–79: Parity again, with the last constant.
@inline(__always)
private func round4(_ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32, _ w: UInt32) {
    e = e &+ rotl(a, 5) &+ (b ^ c ^ d) &+ 0xCA62_C1D6 &+ w
    b = rotl(b, 30)
}
