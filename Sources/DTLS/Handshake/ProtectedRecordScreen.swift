#if WebRTC
// RFC 6347 §4.1.2.7: a DTLS record that fails to decrypt is discarded silently, so that a datagram
// anyone can spoof cannot end an association. OpenSSL 3.0 (3.0.19 here) does not keep to that for
// a protected record (epoch 1 and on) shorter than its cipher's fixed overhead — AES-GCM's 8-byte
// explicit nonce and 16-byte tag: such a record ends the association with an internal error,
// connected or not. One 25-byte datagram did it (found by Fuzz/DTLSDemuxFuzz). No real record is
// that short, so the machine screens each datagram's records before OpenSSL reads any of them.

import COpenSSL

/// Whether a datagram's protected records are long enough to be real under the negotiated cipher.
struct ProtectedRecordScreen: Equatable, Sendable {
    /// The shortest fragment a protected record can have; 0 while no cipher is known.
    var minimumFragment = 0

    /// Whether every protected record in `datagram` (a run of DTLS 1.2 records, RFC 6347 §4.1:
    /// type, version, epoch, sequence number, length, fragment) is at least `minimumFragment`
    /// long. Epoch 0 records are not protected and pass; a last record cut short is OpenSSL's
    /// to discard.
    func admits(_ datagram: [UInt8]) -> Bool {
        var offset = 0
        while offset + DTLSTransport.recordHeaderLength <= datagram.count {
            let epoch = UInt16(datagram[offset + 3]) << 8 | UInt16(datagram[offset + 4])
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            if epoch != 0 && length < minimumFragment { return false }
            offset += DTLSTransport.recordHeaderLength + length
        }
        return true
    }

    /// The shortest protected fragment under `ssl`'s cipher (the current one, or the one the
    /// handshake has chosen): AES-GCM's explicit nonce and tag (24 bytes); another AEAD's tag
    /// (ChaCha20-Poly1305, CCM_8: 16); a CBC suite's IV and one block (32). 0 before a cipher is chosen.
    static func minimumFragment(of ssl: OpaquePointer) -> Int {
        guard let cipher = SSL_get_current_cipher(ssl) ?? SSL_get_pending_cipher(ssl) else { return 0 }
        switch SSL_CIPHER_get_cipher_nid(cipher) {
        case NID_aes_128_gcm, NID_aes_256_gcm, NID_aria_128_gcm, NID_aria_256_gcm: return 24
        default: return SSL_CIPHER_is_aead(cipher) == 1 ? 16 : 32
        }
    }
}
#endif
