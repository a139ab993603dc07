// An ECDSA P-256 key pair made with OpenSSL for the server-to-server key tests (trait `WebRTC`): the
// daemon is given the public half as PEM, the tests sign requests with the private half as Apple's
// page describes.
#if WebRTC
import COpenSSL
import Foundation
import StoreServer

final class TestSigningKey: @unchecked Sendable {
    /// The key every conformance server declares (`ConformanceUser.serverKeyID`).
    static let shared = TestSigningKey()

    private let key: OpaquePointer

    init() {
        let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)
        defer { EVP_PKEY_CTX_free(ctx) }
        var made: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1,
              EVP_PKEY_keygen(ctx, &made) == 1, let made else { fatalError("OpenSSL made no P-256 key") }
        key = made
    }

    deinit { EVP_PKEY_free(key) }

    /// The public key as `BEGIN PUBLIC KEY` PEM.
    var publicPEM: [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { return [] }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else { return [] }
        var out: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 512)
        while true {
            let n = BIO_read(bio, &chunk, Int32(chunk.count))
            if n <= 0 { return out }
            out += chunk[0..<Int(n)]
        }
    }

    /// The DER ECDSA signature of `message` over SHA-256.
    func sign(_ message: [UInt8]) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { return [] }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { return [] }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else { return [] }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else { return [] }
        return Array(signature[0..<length])
    }

    /// The three headers of a request signed with this key as `keyID`, dated `date`.
    func headers(keyID: String, path: String, body: [UInt8], date: Date = Date()) -> [(String, String)] {
        let formatter = ISO8601DateFormatter()
        let dateText = formatter.string(from: date)
        let signature = sign(ServerKeys.message(date: dateText, body: body, path: path))
        return [("X-Apple-CloudKit-Request-KeyID", keyID), ("X-Apple-CloudKit-Request-ISO8601Date", dateText),
                ("X-Apple-CloudKit-Request-SignatureV1", Data(signature).base64EncodedString())]
    }
}
#endif
