#if WebRTC
// RFC 6347 §4.1.2.7: a DTLS record that fails to decrypt is discarded silently, so that a datagram
// anyone can spoof cannot end an association. OpenSSL 3.0 (3.0.19 here) does not keep to that for
// a protected record (epoch 1 and on) shorter than its cipher's fixed overhead — AES-GCM's 8-byte
// explicit nonce and 16-byte tag: such a record ends the association with an internal error,
// connected or not. One 25-byte datagram did it (found by Fuzz/DTLSDemuxFuzz). No real record is
// that short, so the machine screens each datagram's records before OpenSSL reads any of them.
//
// The screen must find every record OpenSSL will read, and OpenSSL does not always step over a
// record by its length: a header whose version it refuses, or whose length is too long to read,
// is dropped alone and the next header is read from the 13 bytes after it (dtls1_get_record). A
// short protected record hidden behind such a header got through a walk by lengths (found by the
// fuzzer again). Which versions OpenSSL refuses depends on its state (any DTLS version before the
// first packet and on alerts, only DTLS 1.2 after), so where the two readings part the screen
// follows both, and refuses the datagram if either meets a short protected record.

import COpenSSL

/// Whether a datagram's protected records are long enough to be real under the negotiated cipher.
struct ProtectedRecordScreen: Equatable, Sendable {
    /// The shortest fragment a protected record can have; 0 while no cipher is known.
    var minimumFragment = 0

    /// Whether every protected record OpenSSL may read in `datagram` (a run of DTLS 1.2 records,
    /// RFC 6347 §4.1: type, version, epoch, sequence number, length, fragment) is at least
    /// `minimumFragment` long. Epoch 0 records are not protected and pass; a last record cut short
    /// is OpenSSL's to discard.
    func admits(_ datagram: [UInt8]) -> Bool {
        guard minimumFragment > 0 else { return true }
        let header = DTLSTransport.recordHeaderLength
        // Where OpenSSL may start reading a header; each start is looked at once, so the walk is
        // linear in the datagram's length however its readings branch.
        var starts = [0]
        var looked = Set<Int>()
        while let offset = starts.popLast() {
            guard offset <= datagram.count - header, looked.insert(offset).inserted else { continue }
            let major = datagram[offset + 1]
            let minor = datagram[offset + 2]
            let epoch = UInt16(datagram[offset + 3]) << 8 | UInt16(datagram[offset + 4])
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            let fits = length <= datagram.count - offset - header
            // Not DTLS 1.2, or not readable whole: OpenSSL may drop the header alone.
            if major != 0xFE || minor != 0xFD || !fits { starts.append(offset + header) }
            // A DTLS version and a fragment that is there: OpenSSL may read it, and decrypt it.
            if major == 0xFE && fits {
                if epoch != 0 && length < minimumFragment { return false }
                starts.append(offset + header + length)
            }
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
