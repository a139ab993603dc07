// The anchors `zonertc-bench dtls` measures beside `SRTPSession`, in the same run, so that its
// figure can be read against what this CPU and this libsrtp2 allow:
// - the hardware floor: OpenSSL's EVP AES-128-GCM sealing 1,200 bytes and opening them again
//   (one reused context per direction, a fresh IV per packet, the 12-byte RTP header as AAD, a
//   16-byte tag), no SRTP logic at all: what any AES-GCM implementation costs here;
// - libsrtp2 alone: srtp_protect then srtp_unprotect on one preallocated C buffer, no Swift arrays:
//   what our wrapper could at best reach with this libsrtp2 (its crypto backend is printed).
#if WebRTC
import COpenSSL
import CSRTP
import DTLS
import Foundation

enum SRTPAnchors {
    /// Which crypto library libsrtp2 was built on, from the shared objects this process mapped.
    static func libsrtpBackend() -> String {
        // /proc files report size 0: read to the end rather than by the size.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile(), !data.isEmpty
        else { return "unknown" }
        let maps = String(decoding: data, as: UTF8.self)
        if maps.contains("libnss3") { return "NSS" }
        return "its own AES or OpenSSL (no NSS mapped)"
    }

    /// libsrtp2's version string.
    static var libsrtpVersion: String { String(cString: srtp_get_version_string()) }

    /// Thread CPU nanoseconds per seal + open of a 1,200-byte packet with EVP AES-128-GCM.
    static func openSSLGCMNanoseconds(packets count: Int, cpuClock: () -> UInt64) -> (ns: Double, checksum: UInt64) {
        let key = (0..<16).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        var iv = [UInt8](repeating: 0x42, count: 12)
        var packet = (0..<1_200).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let headerLength: Int32 = 12
        var tag = [UInt8](repeating: 0, count: 16)
        var produced: Int32 = 0
        var checksum: UInt64 = 0
        guard let seal = EVP_CIPHER_CTX_new(), let open = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new") }
        defer {
            EVP_CIPHER_CTX_free(seal)
            EVP_CIPHER_CTX_free(open)
        }
        guard EVP_EncryptInit_ex(seal, EVP_aes_128_gcm(), nil, key, nil) == 1,
              EVP_DecryptInit_ex(open, EVP_aes_128_gcm(), nil, key, nil) == 1
        else { fatalError("EVP AES-128-GCM init") }

        func one(_ index: Int) {
            iv[8] = UInt8(truncatingIfNeeded: index >> 8)
            iv[11] = UInt8(truncatingIfNeeded: index)
            packet.withUnsafeMutableBufferPointer { bytes in
                let base = bytes.baseAddress!
                let body = base + Int(headerLength)
                let bodyLength = Int32(bytes.count) - headerLength
                guard EVP_EncryptInit_ex(seal, nil, nil, nil, iv) == 1,
                      EVP_EncryptUpdate(seal, nil, &produced, base, headerLength) == 1,
                      EVP_EncryptUpdate(seal, body, &produced, body, bodyLength) == 1,
                      EVP_EncryptFinal_ex(seal, body, &produced) == 1,
                      EVP_CIPHER_CTX_ctrl(seal, EVP_CTRL_AEAD_GET_TAG, 16, &tag) == 1,
                      EVP_DecryptInit_ex(open, nil, nil, nil, iv) == 1,
                      EVP_DecryptUpdate(open, nil, &produced, base, headerLength) == 1,
                      EVP_DecryptUpdate(open, body, &produced, body, bodyLength) == 1,
                      EVP_CIPHER_CTX_ctrl(open, EVP_CTRL_AEAD_SET_TAG, 16, &tag) == 1,
                      EVP_DecryptFinal_ex(open, body, &produced) == 1
                else { fatalError("EVP AES-128-GCM: a packet did not survive") }
            }
            checksum = checksum &* 31 &+ UInt64(packet[12 + index % 1_000]) &+ UInt64(tag[0])
        }

        for index in 0..<10_000 { one(index) }  // warm-up
        let start = cpuClock()
        for index in 0..<count { one(index) }
        return (Double(cpuClock() - start) / Double(count), checksum)
    }

    /// Thread CPU nanoseconds per srtp_protect + srtp_unprotect of a 1,200-byte RTP packet in
    /// one C buffer (the same keys and policy `SRTPSession` builds).
    static func libsrtpNanoseconds(_ profile: SRTPProfile, packets count: Int,
                                   cpuClock: () -> UInt64) -> (ns: Double, checksum: UInt64) {
        let exported = (0..<profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let keys = SRTPKeyingMaterial(profile: profile, exported: exported, role: .client)!
        let sender = makeContext(profile, keyAndSalt: keys.localKeyAndSalt, direction: ssrc_any_outbound)
        let receiver = makeContext(profile, keyAndSalt: keys.localKeyAndSalt, direction: ssrc_any_inbound)
        defer {
            srtp_dealloc(sender)
            srtp_dealloc(receiver)
        }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1_200 + 64)
        defer { buffer.deallocate() }
        var plain: [UInt8] = [0x80, 96, 0, 0, 0, 0, 0, 0, 0xCA, 0xFE, 0xBA, 0xBE]
        while plain.count < 1_200 { plain.append(UInt8(truncatingIfNeeded: plain.count &* 29)) }
        var checksum: UInt64 = 0
        var sequence: UInt32 = 0

        func pairs(_ count: Int) {
            for _ in 0..<count {
                sequence &+= 1
                plain.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: 1_200) }
                buffer[2] = UInt8(truncatingIfNeeded: sequence >> 8)
                buffer[3] = UInt8(truncatingIfNeeded: sequence)
                var length: Int32 = 1_200
                guard srtp_protect(sender, buffer, &length) == srtp_err_status_ok,
                      srtp_unprotect(receiver, buffer, &length) == srtp_err_status_ok, length == 1_200
                else { fatalError("libsrtp anchor: a packet did not survive") }
                checksum = checksum &* 31 &+ UInt64(buffer[12 + Int(sequence % 1_000)])
            }
        }

        pairs(10_000)  // warm-up
        let start = cpuClock()
        pairs(count)
        return (Double(cpuClock() - start) / Double(count), checksum)
    }

    private static func makeContext(_ profile: SRTPProfile, keyAndSalt: [UInt8], direction: srtp_ssrc_type_t) -> srtp_t? {
        // SRTPSession has done srtp_init by the time this runs (its measurement goes first).
        var policy = srtp_policy_t()
        switch profile {
        case .aes128CMSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction
        policy.window_size = 1_024
        policy.allow_repeat_tx = 1
        var key = keyAndSalt
        var context: srtp_t?
        let status = key.withUnsafeMutableBufferPointer { buffer in
            policy.key = buffer.baseAddress
            return srtp_create(&context, &policy)
        }
        guard status == srtp_err_status_ok else { fatalError("libsrtp anchor: srtp_create \(status.rawValue)") }
        return context
    }
}
#endif
