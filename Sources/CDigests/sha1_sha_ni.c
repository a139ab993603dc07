// SHA-1's compression function (FIPS 180-4 §6.1.2) on the x86 SHA extensions: SHA1RNDS4 runs four
// rounds, SHA1NEXTE derives the next four rounds' E, SHA1MSG1/SHA1MSG2 extend the message
// schedule four words at a time (Intel SDM vol. 2B). The portable Swift version is SHA1.swift.
#include "cdigests.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZR_SHA_NI __attribute__((target("sha,sse4.1,ssse3")))

// The instructions hold words most significant lane first: W₀ (and A) in bits 127:96. Reversing
// all 16 bytes of a big-endian block (§3.1) puts W₀…W₃ there as native integers.

/// The message words W₄ₖ…W₄ₖ₊₃ of group k, from the four groups before it kept in `w` (group j
/// in w[j mod 4]): Wₜ = ROTL¹(Wₜ₋₃ ⊕ Wₜ₋₈ ⊕ Wₜ₋₁₄ ⊕ Wₜ₋₁₆) (§6.1.2 step 1).
ZR_SHA_NI static inline __m128i sha1_schedule(__m128i w[4], int k) {
    if (k < 4) return w[k];
    __m128i m = _mm_sha1msg1_epu32(w[k & 3], w[(k + 1) & 3]);  // Wₜ₋₁₆ ⊕ Wₜ₋₁₄
    m = _mm_xor_si128(m, w[(k + 2) & 3]);                      // ⊕ Wₜ₋₈
    m = _mm_sha1msg2_epu32(m, w[(k + 3) & 3]);                 // ⊕ Wₜ₋₃, rotated by one
    w[k & 3] = m;
    return m;
}

// Four rounds of group k with round function `f` (0–3: rounds 0–19, 20–39, 40–59, 60–79; §4.1.1):
// E for this group is ROTL³⁰ of A at the start of the group before (`previous`), added to W₄ₖ.
#define ZR_SHA1_ROUNDS(k, f)                                        \
    do {                                                            \
        __m128i we = _mm_sha1nexte_epu32(previous, sha1_schedule(w, (k))); \
        previous = abcd;                                            \
        abcd = _mm_sha1rnds4_epu32(abcd, we, (f));                  \
    } while (0)

ZR_SHA_NI void zr_sha1_compress_sha_ni(uint32_t state[5], const uint8_t *blocks, size_t count) {
    const __m128i reverse = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // H₀…H₃ in lanes 0–3 reversed, so A = H₀ is in lane 3; E = H₄ alone in lane 3.
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)state), 0x1B);
    __m128i e = _mm_set_epi32((int)state[4], 0, 0, 0);

    for (size_t n = 0; n < count; n++, blocks += 64) {
        const __m128i abcd_start = abcd, e_start = e;
        __m128i w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(blocks + 16 * i)), reverse);
        }

        // Group 0: E is H₄ itself.
        __m128i previous = abcd;
        abcd = _mm_sha1rnds4_epu32(abcd, _mm_add_epi32(e, w[0]), 0);
        for (int k = 1; k < 5; k++) ZR_SHA1_ROUNDS(k, 0);
        for (int k = 5; k < 10; k++) ZR_SHA1_ROUNDS(k, 1);
        for (int k = 10; k < 15; k++) ZR_SHA1_ROUNDS(k, 2);
        for (int k = 15; k < 20; k++) ZR_SHA1_ROUNDS(k, 3);

        // §6.1.2 step 4: E after round 79 is ROTL³⁰ of A at the start of the last group; add H₄.
        e = _mm_sha1nexte_epu32(previous, e_start);
        abcd = _mm_add_epi32(abcd, abcd_start);
    }

    _mm_storeu_si128((__m128i *)(void *)state, _mm_shuffle_epi32(abcd, 0x1B));
    state[4] = (uint32_t)_mm_extract_epi32(e, 3);
}

#endif
