// Whether this CPU can run the SHA-NI compression functions and the PCLMULQDQ CRC-32 (Intel SDM
// vol. 2A, CPUID).
#include "cdigests.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

int zr_cpu_has_sha_extensions(void) {
    unsigned int eax, ebx, ecx, edx;
    // Leaf 1 ECX: bit 9 SSSE3 (PSHUFB, PALIGNR), bit 19 SSE4.1 (PBLENDW).
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    if (!(ecx & (1u << 9)) || !(ecx & (1u << 19))) return 0;
    // Leaf 7 subleaf 0 EBX bit 29: SHA1RNDS4, SHA1NEXTE, SHA1MSG1/2, SHA256RNDS2, SHA256MSG1/2.
    // Leaf 7 exists only if the highest basic leaf (leaf 0 EAX) is at least 7.
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    return (ebx & (1u << 29)) ? 1 : 0;
}

int zr_cpu_has_carryless_multiply(void) {
    unsigned int eax, ebx, ecx, edx;
    // Leaf 1 ECX: bit 1 PCLMULQDQ, bit 19 SSE4.1 (PEXTRD).
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & (1u << 1)) && (ecx & (1u << 19)) ? 1 : 0;
}

#endif
