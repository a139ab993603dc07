// OpenSSL for the DTLS module and the store's server-to-server key check (trait `WebRTC`, Debian
// libssl-dev, pkg-config openssl).
//
// Swift imports OpenSSL's functions but not its function-like macros; the ones DTLS needs are
// spelled out here as `static inline` functions over the `SSL_ctrl`/`BIO_*` calls they expand
// to, so the Swift side reads like the OpenSSL documentation.
#ifndef ZONERTC_COPENSSL_SHIM_H
#define ZONERTC_COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/srtp.h>
#include <openssl/x509.h>
#include <sys/time.h>

/// Initializes libssl and libcrypto without OpenSSL's exit handler. A process may exit (an error
/// on its command line, say) while a thread of its own still runs a handshake; OpenSSL's handler
/// would free the locks under that thread and crash it. The memory is the kernel's to reclaim.
/// Only effective as the process's first OpenSSL call (OPENSSL_init_crypto(3)).
static inline int zonertc_openssl_init(void) {
    return OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS
                            | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
}

/// DTLSv1_get_timeout: 1 and the time left on OpenSSL's retransmission timer, 0 when none runs.
static inline long zonertc_DTLSv1_get_timeout(SSL *ssl, struct timeval *left) {
    return SSL_ctrl(ssl, DTLS_CTRL_GET_TIMEOUT, 0, left);
}

/// DTLSv1_handle_timeout: retransmits the last flight if OpenSSL's timer has expired.
static inline long zonertc_DTLSv1_handle_timeout(SSL *ssl) {
    return SSL_ctrl(ssl, DTLS_CTRL_HANDLE_TIMEOUT, 0, NULL);
}

/// SSL_set_mtu: the largest datagram OpenSSL writes (it fragments its handshake to fit), used with
/// SSL_OP_NO_QUERY_MTU since a memory BIO has no path MTU to ask.
static inline long zonertc_SSL_set_mtu(SSL *ssl, long mtu) {
    return SSL_ctrl(ssl, SSL_CTRL_SET_MTU, mtu, NULL);
}

/// SSL_OP_NO_QUERY_MTU (built by a function-like macro, so not imported).
static inline uint64_t zonertc_SSL_OP_NO_QUERY_MTU(void) { return SSL_OP_NO_QUERY_MTU; }

/// No session resumption from a context: no server-side session cache and no session tickets. Several
/// associations share one context, and a resumed session skips the certificate check that binds each one
/// to its signaled fingerprint.
static inline void zonertc_SSL_CTX_disable_resumption(SSL_CTX *ctx) {
    SSL_CTX_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, SSL_SESS_CACHE_OFF, NULL);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
}

/// SSL_CTX_set_min_proto_version / SSL_CTX_set_max_proto_version.
static inline long zonertc_SSL_CTX_set_proto_versions(SSL_CTX *ctx, int min, int max) {
    if (SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, min, NULL) != 1) return 0;
    return SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, max, NULL);
}

/// BIO_set_retry_read: "no datagram now, ask again later" from a read callback.
static inline void zonertc_BIO_set_retry_read(BIO *bio) {
    BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY);
}

/// BIO_clear_retry_flags.
static inline void zonertc_BIO_clear_retry_flags(BIO *bio) {
    BIO_clear_flags(bio, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
}

/// A fresh ECDSA P-256 key (EVP_EC_gen is a variadic macro Swift cannot call); NULL on failure.
static inline EVP_PKEY *zonertc_generate_p256_key(void) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    if (ctx == NULL) return NULL;
    if (EVP_PKEY_keygen_init(ctx) <= 0
        || EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) <= 0
        || EVP_PKEY_keygen(ctx, &key) <= 0) {
        key = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/// The SSL a certificate-verification callback is verifying for.
static inline SSL *zonertc_SSL_of_store_ctx(X509_STORE_CTX *store) {
    return (SSL *)X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
}

/// Whether the OpenSSL this was compiled against hands its DTLS read BIO a pointer to the
/// retransmission deadline itself (`struct timeval` in `SSL.d1`) with BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT,
/// as 1.1 to 3.1 do; 3.2 and later pass a copy.
static inline int zonertc_dtls_timer_pointer_is_live(void) {
#if OPENSSL_VERSION_MAJOR == 3 && OPENSSL_VERSION_MINOR < 2
    return (OpenSSL_version_num() >> 20) == (OPENSSL_VERSION_NUMBER >> 20);
#else
    return 0;
#endif
}

#endif
