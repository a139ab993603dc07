#if WebRTC
import COpenSSL
import Foundation

/// An ECDSA P-256 public key read from PEM by OpenSSL (trait `WebRTC`), for server-to-server keys
/// (`ServerKeys`). The PEM may hold the public key (`BEGIN PUBLIC KEY`, what `openssl ec -pubout`
/// writes, and what CloudKit Dashboard is given) or the private key (`BEGIN EC PRIVATE KEY` /
/// `BEGIN PRIVATE KEY`), whose public half is used.
public final class ECDSAP256Verifier: SignatureVerifier, @unchecked Sendable {
    // Only read after init; OpenSSL allows concurrent verifications with one key.
    private let key: OpaquePointer

    public struct KeyError: Error, CustomStringConvertible {
        public var description: String
    }

    /// OpenSSL set up as DTLS sets it up (without its exit handler), whichever calls it first.
    private static let ready: Bool = zonertc_openssl_init() == 1

    public init(pem: [UInt8]) throws {
        guard Self.ready else { throw KeyError(description: "OpenSSL did not initialize") }
        guard pem.count <= 16 * 1024 else { throw KeyError(description: "a PEM key file is at most 16 KB") }
        func read(_ reader: (OpaquePointer?) -> OpaquePointer?) -> OpaquePointer? {
            pem.withUnsafeBytes { bytes in
                guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
                defer { BIO_free(bio) }
                return reader(bio)
            }
        }
        guard let key = read({ PEM_read_bio_PUBKEY($0, nil, nil, nil) })
                ?? read({ PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            ERR_clear_error()
            throw KeyError(description: "not a PEM public or private key")
        }
        var name = [CChar](repeating: 0, count: 64)
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC,
              EVP_PKEY_get_group_name(key, &name, name.count, nil) == 1,
              String(cString: name) == "prime256v1" || String(cString: name) == "P-256" else {
            EVP_PKEY_free(key)
            throw KeyError(description: "not an ECDSA P-256 (prime256v1) key, as CloudKit's server-to-server keys are")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    public func verify(message: [UInt8], signature: [UInt8]) -> Bool {
        guard !signature.isEmpty, let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        ERR_clear_error()
        return ok == 1
    }
}
#endif
