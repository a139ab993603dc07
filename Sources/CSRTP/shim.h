// libsrtp2 for the DTLS module (trait `WebRTC`, Debian libsrtp2-dev, pkg-config libsrtp2).
// The public header; SRTP_MAX_TRAILER_LEN is an expression macro Swift does not import.
#ifndef ZONERTC_CSRTP_SHIM_H
#define ZONERTC_CSRTP_SHIM_H

#include <srtp2/srtp.h>

/// The most srtp_protect adds to a packet; srtp_protect_rtcp adds 4 more (E flag and index).
static inline int zonertc_srtp_max_trailer_len(void) { return SRTP_MAX_TRAILER_LEN; }

#endif
