// SHA-256, as specified in FIPS 180-4 ("Secure Hash Standard", August 2015), §6.2.

#if arch(x86_64) || arch(i386)
import CDigests
#endif

/// The SHA-256 hash function (FIPS 180-4 §6.2): 64-byte blocks, 32-byte digest.
public struct SHA256: HashFunction {
    @inlinable public static var blockSize: Int { 64 }
    @inlinable public static var digestSize: Int { 32 }

    /// The intermediate hash value H⁽ⁱ⁾ (FIPS 180-4 §6.2.2), initially H⁽⁰⁾ from §5.3.3: the first
    /// 32 bits of the fractional parts of the square roots of the first eight primes.
    struct State: Sendable {
        var h0: UInt32 = 0x6A09_E667
        var h1: UInt32 = 0xBB67_AE85
        var h2: UInt32 = 0x3C6E_F372
        var h3: UInt32 = 0xA54F_F53A
        var h4: UInt32 = 0x510E_527F
        var h5: UInt32 = 0x9B05_688C
        var h6: UInt32 = 0x1F83_D9AB
        var h7: UInt32 = 0x5BE0_CD19
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
        buffer.absorb(bytes) { SHA256.compress(&state, $0, $1, implementation) }
        self.state = state
    }

    public func finalize(into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= SHA256.digestSize, "SHA256.finalize(into:): buffer smaller than 32 bytes")
        var state = self.state
        let implementation = self.implementation
        buffer.finish(bigEndianLength: true) { SHA256.compress(&state, $0, $1, implementation) }
        let out = digest.baseAddress!
        out.storeBytes(of: state.h0.bigEndian, toByteOffset: 0, as: UInt32.self)
        out.storeBytes(of: state.h1.bigEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: state.h2.bigEndian, toByteOffset: 8, as: UInt32.self)
        out.storeBytes(of: state.h3.bigEndian, toByteOffset: 12, as: UInt32.self)
        out.storeBytes(of: state.h4.bigEndian, toByteOffset: 16, as: UInt32.self)
        out.storeBytes(of: state.h5.bigEndian, toByteOffset: 20, as: UInt32.self)
        out.storeBytes(of: state.h6.bigEndian, toByteOffset: 24, as: UInt32.self)
        out.storeBytes(of: state.h7.bigEndian, toByteOffset: 28, as: UInt32.self)
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
    /// The same on the SHA extensions (CDigests). The shim takes H₀…H₇ as a C array of 8 words, so
    /// they travel through a homogeneous tuple (contiguous, in order) rather than relying on the
    /// layout of `State`.
    static func compressWithSHAExtensions(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var words = (state.h0, state.h1, state.h2, state.h3, state.h4, state.h5, state.h6, state.h7)
        withUnsafeMutablePointer(to: &words) { tuple in
            tuple.withMemoryRebound(to: UInt32.self, capacity: 8) { h in
                zr_sha256_compress_sha_ni(h, blocks.assumingMemoryBound(to: UInt8.self), count)
            }
        }
        state = State(h0: words.0, h1: words.1, h2: words.2, h3: words.3,
                      h4: words.4, h5: words.5, h6: words.6, h7: words.7)
    }
    #endif

    /// The portable path: runs the SHA-256 compression function (FIPS 180-4 §6.2.2 steps 1–4) over
    /// `count` consecutive 64-byte blocks at `blocks` (any alignment).
    ///
    /// The 64 rounds are written out, each naming a…h in rotated order instead of shifting
    /// them; the constants Kₜ (§4.2.2, the first 32 bits of the fractional parts of the cube roots
    /// of the first 64 primes) appear inline. The message schedule Wₜ lives in a 16-word window,
    /// Wₜ for t ≥ 16 overwriting Wₜ₋₁₆.
    static func compressPortable(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var h0 = state.h0, h1 = state.h1, h2 = state.h2, h3 = state.h3
        var h4 = state.h4, h5 = state.h5, h6 = state.h6, h7 = state.h7
        var p = blocks
        for _ in 0..<count {
            var w0 = word(p, 0), w1 = word(p, 1), w2 = word(p, 2), w3 = word(p, 3)
            var w4 = word(p, 4), w5 = word(p, 5), w6 = word(p, 6), w7 = word(p, 7)
            var w8 = word(p, 8), w9 = word(p, 9), w10 = word(p, 10), w11 = word(p, 11)
            var w12 = word(p, 12), w13 = word(p, 13), w14 = word(p, 14), w15 = word(p, 15)
            var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7

            round(a, b, c, &d, e, f, g, &h, 0x428A2F98, w0)
            round(h, a, b, &c, d, e, f, &g, 0x71374491, w1)
            round(g, h, a, &b, c, d, e, &f, 0xB5C0FBCF, w2)
            round(f, g, h, &a, b, c, d, &e, 0xE9B5DBA5, w3)
            round(e, f, g, &h, a, b, c, &d, 0x3956C25B, w4)
            round(d, e, f, &g, h, a, b, &c, 0x59F111F1, w5)
            round(c, d, e, &f, g, h, a, &b, 0x923F82A4, w6)
            round(b, c, d, &e, f, g, h, &a, 0xAB1C5ED5, w7)
            round(a, b, c, &d, e, f, g, &h, 0xD807AA98, w8)
            round(h, a, b, &c, d, e, f, &g, 0x12835B01, w9)
            round(g, h, a, &b, c, d, e, &f, 0x243185BE, w10)
            round(f, g, h, &a, b, c, d, &e, 0x550C7DC3, w11)
            round(e, f, g, &h, a, b, c, &d, 0x72BE5D74, w12)
            round(d, e, f, &g, h, a, b, &c, 0x80DEB1FE, w13)
            round(c, d, e, &f, g, h, a, &b, 0x9BDC06A7, w14)
            round(b, c, d, &e, f, g, h, &a, 0xC19BF174, w15)
            w0 &+= sigma1(w14) &+ w9 &+ sigma0(w1); round(a, b, c, &d, e, f, g, &h, 0xE49B69C1, w0)
            w1 &+= sigma1(w15) &+ w10 &+ sigma0(w2); round(h, a, b, &c, d, e, f, &g, 0xEFBE4786, w1)
            w2 &+= sigma1(w0) &+ w11 &+ sigma0(w3); round(g, h, a, &b, c, d, e, &f, 0x0FC19DC6, w2)
            w3 &+= sigma1(w1) &+ w12 &+ sigma0(w4); round(f, g, h, &a, b, c, d, &e, 0x240CA1CC, w3)
            w4 &+= sigma1(w2) &+ w13 &+ sigma0(w5); round(e, f, g, &h, a, b, c, &d, 0x2DE92C6F, w4)
            w5 &+= sigma1(w3) &+ w14 &+ sigma0(w6); round(d, e, f, &g, h, a, b, &c, 0x4A7484AA, w5)
            w6 &+= sigma1(w4) &+ w15 &+ sigma0(w7); round(c, d, e, &f, g, h, a, &b, 0x5CB0A9DC, w6)
            w7 &+= sigma1(w5) &+ w0 &+ sigma0(w8); round(b, c, d, &e, f, g, h, &a, 0x76F988DA, w7)
            w8 &+= sigma1(w6) &+ w1 &+ sigma0(w9); round(a, b, c, &d, e, f, g, &h, 0x983E5152, w8)
            w9 &+= sigma1(w7) &+ w2 &+ sigma0(w10); round(h, a, b, &c, d, e, f, &g, 0xA831C66D, w9)
            w10 &+= sigma1(w8) &+ w3 &+ sigma0(w11); round(g, h, a, &b, c, d, e, &f, 0xB00327C8, w10)
            w11 &+= sigma1(w9) &+ w4 &+ sigma0(w12); round(f, g, h, &a, b, c, d, &e, 0xBF597FC7, w11)
            w12 &+= sigma1(w10) &+ w5 &+ sigma0(w13); round(e, f, g, &h, a, b, c, &d, 0xC6E00BF3, w12)
            w13 &+= sigma1(w11) &+ w6 &+ sigma0(w14); round(d, e, f, &g, h, a, b, &c, 0xD5A79147, w13)
            w14 &+= sigma1(w12) &+ w7 &+ sigma0(w15); round(c, d, e, &f, g, h, a, &b, 0x06CA6351, w14)
            w15 &+= sigma1(w13) &+ w8 &+ sigma0(w0); round(b, c, d, &e, f, g, h, &a, 0x14292967, w15)
            w0 &+= sigma1(w14) &+ w9 &+ sigma0(w1); round(a, b, c, &d, e, f, g, &h, 0x27B70A85, w0)
            w1 &+= sigma1(w15) &+ w10 &+ sigma0(w2); round(h, a, b, &c, d, e, f, &g, 0x2E1B2138, w1)
            w2 &+= sigma1(w0) &+ w11 &+ sigma0(w3); round(g, h, a, &b, c, d, e, &f, 0x4D2C6DFC, w2)
            w3 &+= sigma1(w1) &+ w12 &+ sigma0(w4); round(f, g, h, &a, b, c, d, &e, 0x53380D13, w3)
            w4 &+= sigma1(w2) &+ w13 &+ sigma0(w5); round(e, f, g, &h, a, b, c, &d, 0x650A7354, w4)
            w5 &+= sigma1(w3) &+ w14 &+ sigma0(w6); round(d, e, f, &g, h, a, b, &c, 0x766A0ABB, w5)
            w6 &+= sigma1(w4) &+ w15 &+ sigma0(w7); round(c, d, e, &f, g, h, a, &b, 0x81C2C92E, w6)
            w7 &+= sigma1(w5) &+ w0 &+ sigma0(w8); round(b, c, d, &e, f, g, h, &a, 0x92722C85, w7)
            w8 &+= sigma1(w6) &+ w1 &+ sigma0(w9); round(a, b, c, &d, e, f, g, &h, 0xA2BFE8A1, w8)
            w9 &+= sigma1(w7) &+ w2 &+ sigma0(w10); round(h, a, b, &c, d, e, f, &g, 0xA81A664B, w9)
            w10 &+= sigma1(w8) &+ w3 &+ sigma0(w11); round(g, h, a, &b, c, d, e, &f, 0xC24B8B70, w10)
            w11 &+= sigma1(w9) &+ w4 &+ sigma0(w12); round(f, g, h, &a, b, c, d, &e, 0xC76C51A3, w11)
            w12 &+= sigma1(w10) &+ w5 &+ sigma0(w13); round(e, f, g, &h, a, b, c, &d, 0xD192E819, w12)
            w13 &+= sigma1(w11) &+ w6 &+ sigma0(w14); round(d, e, f, &g, h, a, b, &c, 0xD6990624, w13)
            w14 &+= sigma1(w12) &+ w7 &+ sigma0(w15); round(c, d, e, &f, g, h, a, &b, 0xF40E3585, w14)
            w15 &+= sigma1(w13) &+ w8 &+ sigma0(w0); round(b, c, d, &e, f, g, h, &a, 0x106AA070, w15)
            w0 &+= sigma1(w14) &+ w9 &+ sigma0(w1); round(a, b, c, &d, e, f, g, &h, 0x19A4C116, w0)
            w1 &+= sigma1(w15) &+ w10 &+ sigma0(w2); round(h, a, b, &c, d, e, f, &g, 0x1E376C08, w1)
            w2 &+= sigma1(w0) &+ w11 &+ sigma0(w3); round(g, h, a, &b, c, d, e, &f, 0x2748774C, w2)
            w3 &+= sigma1(w1) &+ w12 &+ sigma0(w4); round(f, g, h, &a, b, c, d, &e, 0x34B0BCB5, w3)
            w4 &+= sigma1(w2) &+ w13 &+ sigma0(w5); round(e, f, g, &h, a, b, c, &d, 0x391C0CB3, w4)
            w5 &+= sigma1(w3) &+ w14 &+ sigma0(w6); round(d, e, f, &g, h, a, b, &c, 0x4ED8AA4A, w5)
            w6 &+= sigma1(w4) &+ w15 &+ sigma0(w7); round(c, d, e, &f, g, h, a, &b, 0x5B9CCA4F, w6)
            w7 &+= sigma1(w5) &+ w0 &+ sigma0(w8); round(b, c, d, &e, f, g, h, &a, 0x682E6FF3, w7)
            w8 &+= sigma1(w6) &+ w1 &+ sigma0(w9); round(a, b, c, &d, e, f, g, &h, 0x748F82EE, w8)
            w9 &+= sigma1(w7) &+ w2 &+ sigma0(w10); round(h, a, b, &c, d, e, f, &g, 0x78A5636F, w9)
            w10 &+= sigma1(w8) &+ w3 &+ sigma0(w11); round(g, h, a, &b, c, d, e, &f, 0x84C87814, w10)
            w11 &+= sigma1(w9) &+ w4 &+ sigma0(w12); round(f, g, h, &a, b, c, d, &e, 0x8CC70208, w11)
            w12 &+= sigma1(w10) &+ w5 &+ sigma0(w13); round(e, f, g, &h, a, b, c, &d, 0x90BEFFFA, w12)
            w13 &+= sigma1(w11) &+ w6 &+ sigma0(w14); round(d, e, f, &g, h, a, b, &c, 0xA4506CEB, w13)
            w14 &+= sigma1(w12) &+ w7 &+ sigma0(w15); round(c, d, e, &f, g, h, a, &b, 0xBEF9A3F7, w14)
            w15 &+= sigma1(w13) &+ w8 &+ sigma0(w0); round(b, c, d, &e, f, g, h, &a, 0xC67178F2, w15)

            h0 &+= a
            h1 &+= b
            h2 &+= c
            h3 &+= d
            h4 &+= e
            h5 &+= f
            h6 &+= g
            h7 &+= h
            p += 64
        }
        state.h0 = h0
        state.h1 = h1
        state.h2 = h2
        state.h3 = h3
        state.h4 = h4
        state.h5 = h5
        state.h6 = h6
        state.h7 = h7
    }
}

/// Word `i` of the block at `p`, read big-endian (FIPS 180-4 §3.1).
@inline(__always)
private func word(_ p: UnsafeRawPointer, _ i: Int) -> UInt32 {
    UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
}

/// ROTRⁿ(x) (FIPS 180-4 §3.2).
@inline(__always)
private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

/// σ₀²⁵⁶(x) = ROTR⁷(x) ⊕ ROTR¹⁸(x) ⊕ SHR³(x) (FIPS 180-4 §4.1.2, eq. 4.6).
@inline(__always)
private func sigma0(_ x: UInt32) -> UInt32 { rotr(x, 7) ^ rotr(x, 18) ^ (x &>> 3) }

/// σ₁²⁵⁶(x) = ROTR¹⁷(x) ⊕ ROTR¹⁹(x) ⊕ SHR¹⁰(x) (FIPS 180-4 §4.1.2, eq. 4.7).
@inline(__always)
private func sigma1(_ x: UInt32) -> UInt32 { rotr(x, 17) ^ rotr(x, 19) ^ (x &>> 10) }

/// One round (FIPS 180-4 §6.2.2 step 3):
/// T₁ = h + Σ₁(e) + Ch(e, f, g) + Kₜ + Wₜ, T₂ = Σ₀(a) + Maj(a, b, c); d ← d + T₁ (the next
/// round's e), h ← T₁ + T₂ (the next round's a). Σ₀, Σ₁, Ch and Maj per §4.1.2 (eqs. 4.2–4.5),
/// Ch written g ⊕ (e ∧ (f ⊕ g)) and Maj written (a ∧ b) ∨ (c ∧ (a ∨ b)).
@inline(__always)
private func round(
    _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
    _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
    _ k: UInt32, _ w: UInt32
) {
    let bigSigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
    let t1 = h &+ bigSigma1 &+ (g ^ (e & (f ^ g))) &+ k &+ w
    let bigSigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
    let t2 = bigSigma0 &+ ((a & b) | (c & (a | b)))
    d = d &+ t1
    h = t1 &+ t2
}
