#if WebRTC
import CSRTP
import Synchronization

// SRTP and SRTCP (RFC 3711; AES-GCM per RFC 7714) through libsrtp2, keyed by DTLS-SRTP
// (RFC 5764 §4.2). Two libsrtp contexts: one protects what we send with our write key, one
// unprotects what the remote sends with its write key, for any SSRC. Replay protection is on
// for what arrives (RFC 3711 §3.3.2); packets failing authentication or replayed are dropped and
// counted, never passed on. Sending the same packet twice (a NACK retransmission on the original
// SSRC) is allowed: it is the same plaintext under the same index, so nothing new leaks.

/// Protects outgoing and unprotects incoming RTP and RTCP for one DTLS-SRTP association.
public final class SRTPSession {
    /// What the session did with the packets it saw.
    public struct Counters: Hashable, Sendable {
        public var rtpProtected = 0
        public var rtcpProtected = 0
        public var rtpUnprotected = 0
        public var rtcpUnprotected = 0
        /// Incoming packets whose tag did not verify (forged, corrupted, or another key).
        public var authenticationFailures = 0
        /// Incoming packets already seen, or older than the replay window.
        public var replays = 0
        /// Packets libsrtp refused for any other reason (too short, malformed header).
        public var otherFailures = 0
    }

    /// The profile the keys are for.
    public let profile: SRTPProfile
    public private(set) var counters = Counters()

    private var outbound: srtp_t?
    private var inbound: srtp_t?
    private let maximumTrailer: Int

    /// The replay window libsrtp keeps (RFC 3711 §3.3.2 asks at least 64).
    public static let defaultReplayWindow = 1_024

    public init(keys: SRTPKeyingMaterial, replayWindow: Int = SRTPSession.defaultReplayWindow) throws(SRTPError) {
        try SRTPSession.initializeLibrary()
        profile = keys.profile
        maximumTrailer = Int(zonertc_srtp_max_trailer_len()) + 4
        outbound = try SRTPSession.makeContext(keys.profile, keyAndSalt: keys.localKeyAndSalt,
                                                direction: ssrc_any_outbound, replayWindow: replayWindow)
        do {
            inbound = try SRTPSession.makeContext(keys.profile, keyAndSalt: keys.remoteKeyAndSalt,
                                                   direction: ssrc_any_inbound, replayWindow: replayWindow)
        } catch {
            srtp_dealloc(outbound)
            throw error
        }
    }

    deinit {
        srtp_dealloc(outbound)
        srtp_dealloc(inbound)
    }

    /// Encrypts and tags an RTP packet in place; false (and counted) when libsrtp refuses it.
    public func protectRTP(_ packet: inout [UInt8]) -> Bool {
        guard run(srtp_protect, outbound, &packet, growing: true) == srtp_err_status_ok else {
            counters.otherFailures += 1
            return false
        }
        counters.rtpProtected += 1
        return true
    }

    /// Encrypts and tags an RTCP packet (compound or not) in place, as SRTCP.
    public func protectRTCP(_ packet: inout [UInt8]) -> Bool {
        guard run(srtp_protect_rtcp, outbound, &packet, growing: true) == srtp_err_status_ok else {
            counters.otherFailures += 1
            return false
        }
        counters.rtcpProtected += 1
        return true
    }

    /// Verifies and decrypts an SRTP packet in place; false when it must be dropped (counted).
    public func unprotectRTP(_ packet: inout [UInt8]) -> Bool {
        let status = run(srtp_unprotect, inbound, &packet, growing: false)
        guard status == srtp_err_status_ok else {
            countRefused(status)
            return false
        }
        counters.rtpUnprotected += 1
        return true
    }

    /// Verifies and decrypts an SRTCP packet in place; false when it must be dropped (counted).
    public func unprotectRTCP(_ packet: inout [UInt8]) -> Bool {
        let status = run(srtp_unprotect_rtcp, inbound, &packet, growing: false)
        guard status == srtp_err_status_ok else {
            countRefused(status)
            return false
        }
        counters.rtcpUnprotected += 1
        return true
    }

    private func countRefused(_ status: srtp_err_status_t) {
        switch status {
        case srtp_err_status_auth_fail: counters.authenticationFailures += 1
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: counters.replays += 1
        default: counters.otherFailures += 1
        }
    }

    /// srtp_protect, srtp_unprotect and their RTCP twins: a packet, its length in and out.
    private typealias Transform = (srtp_t?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> srtp_err_status_t

    /// Runs one libsrtp transform over `packet`, giving it room for its trailer when protecting.
    private func run(_ transform: Transform, _ context: srtp_t?, _ packet: inout [UInt8],
                     growing: Bool) -> srtp_err_status_t {
        // libsrtp reads an RTP/RTCP header before checking lengths; Int32 lengths only.
        guard packet.count >= 8, packet.count <= 65_535 else { return srtp_err_status_bad_param }
        if growing && packet.capacity < packet.count + maximumTrailer {
            return runCopying(transform, context, &packet)
        }
        var length = Int32(packet.count)
        if growing { packet.append(contentsOf: repeatElement(0, count: maximumTrailer)) }
        let status = packet.withUnsafeMutableBytes { transform(context, $0.baseAddress, &length) }
        let kept = status == srtp_err_status_ok ? Int(length) : (growing ? packet.count - maximumTrailer : packet.count)
        packet.removeLast(packet.count - min(max(kept, 0), packet.count))
        return status
    }

    /// Protecting a packet with no room for the trailer: one buffer of the full size, the packet
    /// written into it and protected there.
    private func runCopying(_ transform: Transform, _ context: srtp_t?,
                            _ packet: inout [UInt8]) -> srtp_err_status_t {
        let count = packet.count
        let capacity = count + maximumTrailer
        var status = srtp_err_status_ok
        let protected = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            packet.withUnsafeBufferPointer { buffer.baseAddress!.update(from: $0.baseAddress!, count: count) }
            var length = Int32(count)
            status = transform(context, buffer.baseAddress, &length)
            initialized = status == srtp_err_status_ok ? min(max(Int(length), 0), capacity) : 0
        }
        if status == srtp_err_status_ok { packet = protected }
        return status
    }

    private static func makeContext(_ profile: SRTPProfile, keyAndSalt: [UInt8], direction: srtp_ssrc_type_t,
                                    replayWindow: Int) throws(SRTPError) -> srtp_t? {
        var policy = srtp_policy_t()
        switch profile {
        case .aes128CMSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)  // AES_CM_128_HMAC_SHA1_80
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction
        policy.window_size = UInt(clamping: min(max(replayWindow, 64), 0x7fff))
        policy.allow_repeat_tx = 1
        var key = keyAndSalt
        var context: srtp_t?
        let status = key.withUnsafeMutableBufferPointer { buffer in
            policy.key = buffer.baseAddress
            return srtp_create(&context, &policy)
        }
        guard status == srtp_err_status_ok else {
            throw SRTPError("srtp_create (\(profile)) failed with libsrtp status \(status.rawValue)")
        }
        return context
    }

    private static let library = Mutex<Bool>(false)

    /// srtp_init, once per process, with NSS held open first when libsrtp2 runs on it (the context
    /// is never closed: the process's sessions need NSS until it exits).
    private static func initializeLibrary() throws(SRTPError) {
        let ready = library.withLock { (ready: inout Bool) -> Bool in
            if !ready {
                _ = zonertc_srtp_hold_nss()
                ready = srtp_init() == srtp_err_status_ok
            }
            return ready
        }
        guard ready else { throw SRTPError("srtp_init failed") }
    }
}

/// An SRTP session that could not be set up (a local fault).
public struct SRTPError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
#endif
