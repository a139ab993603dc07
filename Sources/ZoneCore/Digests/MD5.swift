// MD5, as specified in RFC 1321 ("The MD5 Message-Digest Algorithm", April 1992), §3.
//
// MD5 is broken for collision resistance; it is here only for protocols that still name it
// (e.g. the long-term-credential key of RFC 5389 §15.4, MD5(username ":" realm ":" password)).

/// The MD5 hash function (RFC 1321): 64-byte blocks, 16-byte digest.
public struct MD5: HashFunction {
    @inlinable public static var blockSize: Int { 64 }
    @inlinable public static var digestSize: Int { 16 }

    /// The MD buffer A, B, C, D (RFC 1321 §3.3), initially word A = 01 23 45 67 etc. (low byte first).
    struct State: Sendable {
        var a: UInt32 = 0x6745_2301
        var b: UInt32 = 0xEFCD_AB89
        var c: UInt32 = 0x98BA_DCFE
        var d: UInt32 = 0x1032_5476
    }

    private var state = State()
    private var buffer = MDBlockBuffer()

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var state = self.state
        buffer.absorb(bytes) { MD5.compress(&state, $0, $1) }
        self.state = state
    }

    public func finalize(into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= MD5.digestSize, "MD5.finalize(into:): buffer smaller than 16 bytes")
        var state = self.state
        // RFC 1321 §3.2: the 64-bit length is appended low-order word (and byte) first.
        buffer.finish(bigEndianLength: false) { MD5.compress(&state, $0, $1) }
        let out = digest.baseAddress!
        out.storeBytes(of: state.a.littleEndian, toByteOffset: 0, as: UInt32.self)
        out.storeBytes(of: state.b.littleEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: state.c.littleEndian, toByteOffset: 8, as: UInt32.self)
        out.storeBytes(of: state.d.littleEndian, toByteOffset: 12, as: UInt32.self)
    }

    /// Processes `count` consecutive 64-byte blocks at `blocks` (RFC 1321 §3.4), any alignment.
    ///
    /// The 64 steps are written out with the table T[i] = ⌊2³² · |sin i|⌋ inline; each step names
    /// a, b, c, d in the rotated order the RFC's listing uses ([ABCD 0 7 1], [DABC 1 12 2], …).
    static func compress(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var sa = state.a, sb = state.b, sc = state.c, sd = state.d
        var p = blocks
        for _ in 0..<count {
            let x0 = word(p, 0), x1 = word(p, 1), x2 = word(p, 2), x3 = word(p, 3)
            let x4 = word(p, 4), x5 = word(p, 5), x6 = word(p, 6), x7 = word(p, 7)
            let x8 = word(p, 8), x9 = word(p, 9), x10 = word(p, 10), x11 = word(p, 11)
            let x12 = word(p, 12), x13 = word(p, 13), x14 = word(p, 14), x15 = word(p, 15)
            var a = sa, b = sb, c = sc, d = sd

            // Round 1
            f(&a, b, c, d, x0, 0xD76AA478, 7)
            f(&d, a, b, c, x1, 0xE8C7B756, 12)
            f(&c, d, a, b, x2, 0x242070DB, 17)
            f(&b, c, d, a, x3, 0xC1BDCEEE, 22)
            f(&a, b, c, d, x4, 0xF57C0FAF, 7)
            f(&d, a, b, c, x5, 0x4787C62A, 12)
            f(&c, d, a, b, x6, 0xA8304613, 17)
            f(&b, c, d, a, x7, 0xFD469501, 22)
            f(&a, b, c, d, x8, 0x698098D8, 7)
            f(&d, a, b, c, x9, 0x8B44F7AF, 12)
            f(&c, d, a, b, x10, 0xFFFF5BB1, 17)
            f(&b, c, d, a, x11, 0x895CD7BE, 22)
            f(&a, b, c, d, x12, 0x6B901122, 7)
            f(&d, a, b, c, x13, 0xFD987193, 12)
            f(&c, d, a, b, x14, 0xA679438E, 17)
            f(&b, c, d, a, x15, 0x49B40821, 22)
            // Round 2
            g(&a, b, c, d, x1, 0xF61E2562, 5)
            g(&d, a, b, c, x6, 0xC040B340, 9)
            g(&c, d, a, b, x11, 0x265E5A51, 14)
            g(&b, c, d, a, x0, 0xE9B6C7AA, 20)
            g(&a, b, c, d, x5, 0xD62F105D, 5)
            g(&d, a, b, c, x10, 0x02441453, 9)
            g(&c, d, a, b, x15, 0xD8A1E681, 14)
            g(&b, c, d, a, x4, 0xE7D3FBC8, 20)
            g(&a, b, c, d, x9, 0x21E1CDE6, 5)
            g(&d, a, b, c, x14, 0xC33707D6, 9)
            g(&c, d, a, b, x3, 0xF4D50D87, 14)
            g(&b, c, d, a, x8, 0x455A14ED, 20)
            g(&a, b, c, d, x13, 0xA9E3E905, 5)
            g(&d, a, b, c, x2, 0xFCEFA3F8, 9)
            g(&c, d, a, b, x7, 0x676F02D9, 14)
            g(&b, c, d, a, x12, 0x8D2A4C8A, 20)
            // Round 3
            h(&a, b, c, d, x5, 0xFFFA3942, 4)
            h(&d, a, b, c, x8, 0x8771F681, 11)
            h(&c, d, a, b, x11, 0x6D9D6122, 16)
            h(&b, c, d, a, x14, 0xFDE5380C, 23)
            h(&a, b, c, d, x1, 0xA4BEEA44, 4)
            h(&d, a, b, c, x4, 0x4BDECFA9, 11)
            h(&c, d, a, b, x7, 0xF6BB4B60, 16)
            h(&b, c, d, a, x10, 0xBEBFBC70, 23)
            h(&a, b, c, d, x13, 0x289B7EC6, 4)
            h(&d, a, b, c, x0, 0xEAA127FA, 11)
            h(&c, d, a, b, x3, 0xD4EF3085, 16)
            h(&b, c, d, a, x6, 0x04881D05, 23)
            h(&a, b, c, d, x9, 0xD9D4D039, 4)
            h(&d, a, b, c, x12, 0xE6DB99E5, 11)
            h(&c, d, a, b, x15, 0x1FA27CF8, 16)
            h(&b, c, d, a, x2, 0xC4AC5665, 23)
            // Round 4
            i(&a, b, c, d, x0, 0xF4292244, 6)
            i(&d, a, b, c, x7, 0x432AFF97, 10)
            i(&c, d, a, b, x14, 0xAB9423A7, 15)
            i(&b, c, d, a, x5, 0xFC93A039, 21)
            i(&a, b, c, d, x12, 0x655B59C3, 6)
            i(&d, a, b, c, x3, 0x8F0CCC92, 10)
            i(&c, d, a, b, x10, 0xFFEFF47D, 15)
            i(&b, c, d, a, x1, 0x85845DD1, 21)
            i(&a, b, c, d, x8, 0x6FA87E4F, 6)
            i(&d, a, b, c, x15, 0xFE2CE6E0, 10)
            i(&c, d, a, b, x6, 0xA3014314, 15)
            i(&b, c, d, a, x13, 0x4E0811A1, 21)
            i(&a, b, c, d, x4, 0xF7537E82, 6)
            i(&d, a, b, c, x11, 0xBD3AF235, 10)
            i(&c, d, a, b, x2, 0x2AD7D2BB, 15)
            i(&b, c, d, a, x9, 0xEB86D391, 21)

            sa &+= a
            sb &+= b
            sc &+= c
            sd &+= d
            p += 64
        }
        state.a = sa
        state.b = sb
        state.c = sc
        state.d = sd
    }
}

/// Word `i` of the block at `p`, read little-endian (RFC 1321 §2: low-order byte first).
@inline(__always)
private func word(_ p: UnsafeRawPointer, _ i: Int) -> UInt32 {
    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
}

@inline(__always)
private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

// The step operation of RFC 1321 §3.4, a = b + ((a + F(b,c,d) + X[k] + T[i]) <<< s), with its
// four auxiliary functions:
//   F(X,Y,Z) = XY v not(X) Z      written Z xor (X and (Y xor Z))
//   G(X,Y,Z) = XZ v Y not(Z)      written Y xor (Z and (X xor Y))
//   H(X,Y,Z) = X xor Y xor Z
//   I(X,Y,Z) = Y xor (X v not(Z))

@inline(__always)
private func f(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ t: UInt32, _ s: UInt32) {
    a = b &+ rotl(a &+ (d ^ (b & (c ^ d))) &+ x &+ t, s)
}

@inline(__always)
private func g(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ t: UInt32, _ s: UInt32) {
    a = b &+ rotl(a &+ (c ^ (d & (b ^ c))) &+ x &+ t, s)
}

@inline(__always)
private func h(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ t: UInt32, _ s: UInt32) {
    a = b &+ rotl(a &+ (b ^ c ^ d) &+ x &+ t, s)
}

@inline(__always)
private func i(_ a: inout UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ t: UInt32, _ s: UInt32) {
    a = b &+ rotl(a &+ (c ^ (b | ~d)) &+ x &+ t, s)
}
