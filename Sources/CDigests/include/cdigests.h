// CDigests: the SHA-1 and SHA-256 compression functions on the x86 SHA extensions (SHA-NI), for
// ZoneCore's SHA1 and SHA256, and CRC-32 by carry-less multiplication (PCLMULQDQ) for its CRC32,
// which all keep their portable Swift code as the fallback.
//
// The instructions are enabled per function (`__attribute__((target(...)))`), so the package
// builds with no extra compiler flags, and everything here exists only on x86: elsewhere the
// header declares nothing and Swift always takes its portable path.
#ifndef ZONERTC_CDIGESTS_H
#define ZONERTC_CDIGESTS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)

/// 1 if this CPU has the SHA extensions and the SSE4.1 and SSSE3 instructions the functions below
/// also use (CPUID leaf 7 EBX bit 29; leaf 1 ECX bits 19 and 9), else 0. Asks CPUID on every call:
/// callers ask once and keep the answer.
int zr_cpu_has_sha_extensions(void);

/// Runs the SHA-1 compression function (FIPS 180-4 §6.1.2) over `count` consecutive 64-byte blocks
/// at `blocks` (any alignment). `state` is H0…H4 in order, as native integers.
/// Only to be called when zr_cpu_has_sha_extensions() is 1.
void zr_sha1_compress_sha_ni(uint32_t state[5], const uint8_t *blocks, size_t count);

/// Runs the SHA-256 compression function (FIPS 180-4 §6.2.2) over `count` consecutive 64-byte blocks
/// at `blocks` (any alignment). `state` is H0…H7 in order, as native integers.
/// Only to be called when zr_cpu_has_sha_extensions() is 1.
void zr_sha256_compress_sha_ni(uint32_t state[8], const uint8_t *blocks, size_t count);

/// 1 if this CPU has PCLMULQDQ and SSE4.1 (CPUID leaf 1 ECX bits 1 and 19), else 0. Asks CPUID on
/// every call: callers ask once and keep the answer.
int zr_cpu_has_carryless_multiply(void);

/// Runs the reflected CRC-32 register `crc` (IEEE 802.3 polynomial; pre-conditioned by the caller,
/// not complemented here) over the `length` bytes at `p` (any alignment) and returns it. `length`
/// must be at least 16 and a multiple of 16. Only to be called when
/// zr_cpu_has_carryless_multiply() is 1.
uint32_t zr_crc32_fold_pclmul(uint32_t crc, const uint8_t *p, size_t length);

#endif

#endif
