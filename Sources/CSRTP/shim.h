// libsrtp2 for the DTLS module (trait `WebRTC`, Debian libsrtp2-dev, pkg-config libsrtp2).
// The public header; SRTP_MAX_TRAILER_LEN is an expression macro Swift does not import.
#ifndef ZONERTC_CSRTP_SHIM_H
#define ZONERTC_CSRTP_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <srtp2/srtp.h>

/// The most srtp_protect adds to a packet; srtp_protect_rtcp adds 4 more (E flag and index).
static inline int zonertc_srtp_max_trailer_len(void) { return SRTP_MAX_TRAILER_LEN; }

/// When libsrtp2 runs on NSS (Debian builds it so), opens one NSS context for the life of the
/// process and returns 1; 0 when this libsrtp2 has no NSS in the process (OpenSSL or its own AES).
/// libsrtp2's NSS ciphers open an NSS context per cipher and close it when the cipher goes; with no
/// other context open, each of them initializes NSS (loading its soft token and running its power-up
/// self-tests) and shuts it down again: srtp_init's self-tests do that a dozen times (18 ms of CPU
/// here, 4 ms with this context held). The symbol is looked up at run time so that no build needs
/// NSS's headers and a libsrtp2 without NSS is left as it is; the flags are the ones libsrtp2's
/// ciphers pass, so theirs join this one.
static inline int zonertc_srtp_hold_nss(void) {
    typedef void *(*nss_init_context)(const char *, const char *, const char *, const char *, void *,
                                      unsigned int);
    void *process = dlopen(NULL, RTLD_NOW); /* the program and the libraries it was linked with */
    if (process == NULL) return 0;
    nss_init_context init = (nss_init_context)dlsym(process, "NSS_InitContext");
    if (init == NULL) return 0;
    /* NSS_INIT_READONLY | NSS_INIT_NOCERTDB | NSS_INIT_NOMODDB | NSS_INIT_FORCEOPEN
       | NSS_INIT_OPTIMIZESPACE (nss.h) */
    return init("", "", "", "", NULL, 0x01 | 0x02 | 0x04 | 0x08 | 0x20) != NULL;
}

#endif
