// SHA-256's compression function (FIPS 180-4 §6.2.2) on the x86 SHA extensions: SHA256RNDS2 runs
// two rounds, SHA256MSG1/SHA256MSG2 extend the message schedule four words at a time (Intel SDM
// vol. 2B). The portable Swift version is SHA256.swift.
#include "cdigests.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZR_SHA_NI __attribute__((target("sha,sse4.1,ssse3")))

/// Kₜ (§4.2.2): the first 32 bits of the fractional parts of the cube roots of the first 64
/// primes, in round order, four to a vector (lane 0 first).
static const uint32_t round_constants[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/// The message words W₄ₖ…W₄ₖ₊₃ of group k (lane 0 first), from the four groups before it kept in
/// `w` (group j in w[j mod 4]): Wₜ = σ₁(Wₜ₋₂) + Wₜ₋₇ + σ₀(Wₜ₋₁₅) + Wₜ₋₁₆ (§6.2.2 step 1).
ZR_SHA_NI static inline __m128i sha256_schedule(__m128i w[4], int k) {
    if (k < 4) return w[k];
    __m128i m = _mm_sha256msg1_epu32(w[k & 3], w[(k + 1) & 3]);           // Wₜ₋₁₆ + σ₀(Wₜ₋₁₅)
    m = _mm_add_epi32(m, _mm_alignr_epi8(w[(k + 3) & 3], w[(k + 2) & 3], 4));  // + Wₜ₋₇
    m = _mm_sha256msg2_epu32(m, w[(k + 3) & 3]);                            // + σ₁(Wₜ₋₂)
    w[k & 3] = m;
    return m;
}

ZR_SHA_NI void zr_sha256_compress_sha_ni(uint32_t state[8], const uint8_t *blocks, size_t count) {
    // Each 32-bit lane's bytes reversed: big-endian words (§3.1) become native, W₀ in lane 0.
    const __m128i byteswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);

    // SHA256RNDS2 keeps the working variables as two vectors, lanes 3…0 = A, B, E, F and
    // C, D, G, H. From H₀…H₃ = (A, B, C, D) and H₄…H₇ = (E, F, G, H), lane 0 first:
    __m128i badc = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)state), 0xB1);
    __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)(state + 4)), 0x1B);
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);      // lanes 0…3: F, E, B, A
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);   // lanes 0…3: H, G, D, C

    for (size_t n = 0; n < count; n++, blocks += 64) {
        const __m128i abef_start = abef, cdgh_start = cdgh;
        __m128i w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(blocks + 16 * i)), byteswap);
        }
        // Unrolled, so the four schedule vectors stay in registers.
#pragma clang loop unroll(full)
        for (int k = 0; k < 16; k++) {
            __m128i wk = _mm_add_epi32(sha256_schedule(w, k),
                                       _mm_load_si128((const __m128i *)(const void *)&round_constants[4 * k]));
            // Two rounds give the new A, B, E, F; the new C, D, G, H are the old A, B, E, F. So
            // the two variables swap roles after each pair of rounds, and are back after four.
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);                       // Wₜ + Kₜ in lanes 0, 1
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));  // lanes 2, 3
        }
        // §6.2.2 step 4: H⁽ⁱ⁾ = H⁽ⁱ⁻¹⁾ + the working variables.
        abef = _mm_add_epi32(abef, abef_start);
        cdgh = _mm_add_epi32(cdgh, cdgh_start);
    }

    __m128i abef_reversed = _mm_shuffle_epi32(abef, 0x1B);   // lanes 0…3: A, B, E, F
    __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xB1);            // lanes 0…3: G, H, C, D
    _mm_storeu_si128((__m128i *)(void *)state, _mm_blend_epi16(abef_reversed, ghcd, 0xF0));            // A, B, C, D
    _mm_storeu_si128((__m128i *)(void *)(state + 4), _mm_alignr_epi8(ghcd, abef_reversed, 8));         // E, F, G, H
}

#endif
