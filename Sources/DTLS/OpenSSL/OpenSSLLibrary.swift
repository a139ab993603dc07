#if WebRTC
import COpenSSL

/// OpenSSL set up once per process, before any other OpenSSL call: every entry point of this
/// module that reaches OpenSSL first reads `ready`.
enum OpenSSLLibrary {
    /// True once libssl and libcrypto are initialized (without OpenSSL's exit handler — see
    /// `zonertc_openssl_init`). Swift runs a static's initializer exactly once, thread-safely.
    static let ready: Bool = zonertc_openssl_init() == 1
}
#endif
