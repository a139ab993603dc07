// CRC-32 (IEEE 802.3, reflected: ZoneCore's CRC32.swift) by folding with carry-less multiplication
// (PCLMULQDQ), after Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction" (Intel, 2009). The register is 128 bits of message "still to be reduced"; folding
// multiplies its two halves by x^(k) mod P for the distance k they move forward and adds the next
// 16 bytes. At the end 128 bits are folded to 64, then 32, and a Barrett reduction leaves the CRC.
// The constants are those reductions, bit-reflected with the CRC (checked against the table-driven
// code in CRC32Tests).
#include "cdigests.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZR_PCLMUL __attribute__((target("pclmul,sse4.1")))

/// Folds `x` forward by the distance the constants in `k` stand for and adds `next`: the low half
/// times k's low quadword, the high half times its high quadword.
ZR_PCLMUL static inline __m128i crc32_fold(__m128i x, __m128i k, __m128i next) {
    __m128i low = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i high = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

ZR_PCLMUL static inline __m128i crc32_load(const uint8_t *p) { return _mm_loadu_si128((const __m128i *)p); }

ZR_PCLMUL uint32_t zr_crc32_fold_pclmul(uint32_t crc, const uint8_t *p, size_t length) {
    // Four 16-byte lanes move 64 bytes (x^(4·128±32) mod P); one lane moves 16 (x^(128±32) mod P).
    const __m128i by64 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
    const __m128i by16 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    const __m128i by4 = _mm_set_epi64x(0, 0x163cd6124LL);
    // Barrett reduction: μ = floor(x^64 / P) (high) and P itself (low), both reflected.
    const __m128i barrett = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL);
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);

    __m128i x1 = _mm_xor_si128(crc32_load(p), _mm_cvtsi32_si128((int)crc));
    if (length >= 64) {
        // Four lanes, whose multiplications do not wait for each other, then folded into one.
        __m128i x2 = crc32_load(p + 16), x3 = crc32_load(p + 32), x4 = crc32_load(p + 48);
        p += 64;
        length -= 64;
        while (length >= 64) {
            x1 = crc32_fold(x1, by64, crc32_load(p));
            x2 = crc32_fold(x2, by64, crc32_load(p + 16));
            x3 = crc32_fold(x3, by64, crc32_load(p + 32));
            x4 = crc32_fold(x4, by64, crc32_load(p + 48));
            p += 64;
            length -= 64;
        }
        x1 = crc32_fold(x1, by16, x2);
        x1 = crc32_fold(x1, by16, x3);
        x1 = crc32_fold(x1, by16, x4);
    } else {
        p += 16;
        length -= 16;
    }
    while (length >= 16) {
        x1 = crc32_fold(x1, by16, crc32_load(p));
        p += 16;
        length -= 16;
    }
    // 128 bits to 64: the low half times by16's high constant, plus the high half.
    __m128i t = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, by16, 0x10), t);
    // 64 to 32.
    t = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), by4, 0x00), t);
    // Barrett: q = (low 32 bits × μ) mod x^32, CRC = the value minus q × P, found in bits 63:32.
    t = x1;
    x1 = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), barrett, 0x10), low32);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, barrett, 0x00), t);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

#endif
