#if WebRTC
import COpenSSL
import SDP
import Synchronization

// The endpoint's DTLS identity: RFC 8827 §6.5 — a self-signed certificate whose fingerprint the
// signaling carries, so the handshake authenticates the peer the signaling vouched for. ECDSA
// P-256 as browsers use (RFC 8842 §5 asks for SHA-256 fingerprints); one per process, made on
// first use, like a browser's per-origin certificate.

/// A self-signed ECDSA P-256 certificate and its private key.
public final class DTLSCertificate: @unchecked Sendable {
    // Immutable after init: OpenSSL objects only read (and reference-counted) from here on.
    let key: OpaquePointer
    let certificate: OpaquePointer
    /// Its SHA-256 fingerprint, for `a=fingerprint` (SDP's own fingerprint type).
    public let fingerprint: DTLSFingerprint
    /// The certificate, DER-encoded.
    public let der: [UInt8]

    private static let processCertificate = Mutex<DTLSCertificate?>(nil)

    /// An SSL_CTX made with this certificate; OpenSSL allows SSL_new on one context from any thread.
    private struct SharedContext: @unchecked Sendable { let context: OpaquePointer }

    /// The SSL_CTXs made with this certificate, by SRTP profile list (`context(srtpProfiles:make:)`).
    private let contexts = Mutex<[String: SharedContext]>([:])

    /// This process's certificate, generated the first time it is asked for.
    public static func forProcess() throws(DTLSSetupError) -> DTLSCertificate {
        try processCertificate.withLock { (cached: inout DTLSCertificate?) throws(DTLSSetupError) -> DTLSCertificate in
            if let cached { return cached }
            let made = try DTLSCertificate(commonName: "zonertc", validity: .seconds(30 * 86_400))
            cached = made
            return made
        }
    }

    /// Generates a key and a certificate valid from a day ago for `validity`.
    public init(commonName: String, validity: Duration) throws(DTLSSetupError) {
        guard OpenSSLLibrary.ready else { throw DTLSSetupError("OpenSSL failed to initialize") }
        guard let key = zonertc_generate_p256_key() else { throw DTLSSetupError("P-256 key generation failed") }
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw DTLSSetupError("X509_new failed")
        }
        var serial: UInt32 = 0
        _ = withUnsafeMutableBytes(of: &serial) { RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 4) }
        let name = X509_get_subject_name(x509)
        let signed = X509_set_version(x509, 2) == 1
            && ASN1_INTEGER_set(X509_get_serialNumber(x509), Int(serial & 0x7fff_ffff)) == 1
            && X509_gmtime_adj(X509_getm_notBefore(x509), -86_400) != nil
            && X509_gmtime_adj(X509_getm_notAfter(x509), Int(validity.nanoseconds / 1_000_000_000)) != nil
            && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1
            && X509_set_issuer_name(x509, name) == 1
            && X509_set_pubkey(x509, key) == 1
            && X509_sign(x509, key, EVP_sha256()) > 0
        guard signed, let digest = DTLSCertificate.digest(of: x509, hashFunction: "sha-256"),
              let der = DTLSCertificate.der(of: x509)
        else {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw DTLSSetupError("self-signed certificate: \(OpenSSLError.drainReasons())")
        }
        self.key = key
        self.certificate = x509
        self.fingerprint = DTLSFingerprint(hashFunction: "sha-256", digest: digest)
        self.der = der
    }

    /// The one SSL context for associations with this certificate and `srtpProfiles` (OpenSSL's list,
    /// `a:b`), made by `make` the first time. Each SSL made from it holds a reference of its own, so it
    /// outlives this certificate as long as an association uses it.
    func context(srtpProfiles: String, make: (DTLSCertificate, String) throws(DTLSSetupError) -> OpaquePointer)
        throws(DTLSSetupError) -> OpaquePointer {
        try contexts.withLock { (contexts: inout [String: SharedContext]) throws(DTLSSetupError) -> SharedContext in
            if let made = contexts[srtpProfiles] { return made }
            let made = SharedContext(context: try make(self, srtpProfiles))
            contexts[srtpProfiles] = made
            return made
        }.context
    }

    deinit {
        contexts.withLock { contexts in for shared in contexts.values { SSL_CTX_free(shared.context) } }
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// Hash functions RFC 8122 §5 forbids for fingerprints (too weak to bind a certificate).
    static let forbiddenHashFunctions: Set<String> = ["md2", "md5"]

    /// The digest of `x509`'s DER encoding with the hash function SDP names `hashFunction`
    /// (`sha-256`, `sha-1`, …); nil for a forbidden or unknown one.
    static func digest(of x509: OpaquePointer, hashFunction: String) -> [UInt8]? {
        guard !forbiddenHashFunctions.contains(hashFunction),
              let algorithm = EVP_get_digestbyname(String(hashFunction.filter { $0 != "-" }))
        else { return nil }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(x509, algorithm, &digest, &length) == 1 else { return nil }
        return Array(digest.prefix(Int(length)))
    }

    /// `x509` DER-encoded.
    static func der(of x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? der : nil
    }
}

/// A DTLS endpoint that could not be set up (no key, no context): a local fault, not the peer's.
public struct DTLSSetupError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
#endif
