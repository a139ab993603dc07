#if WebRTC
// What the DTLS exporter gives SRTP: RFC 5764 §4.2 — `EXTRACTOR-dtls_srtp` yields
// client_write_SRTP_master_key | server_write_SRTP_master_key | client_write_SRTP_master_salt |
// server_write_SRTP_master_salt. Each side protects with its own write key and unprotects with
// the other's.

/// The SRTP master keys and salts of one DTLS association, from this endpoint's point of view.
public struct SRTPKeyingMaterial: Hashable, Sendable {
    /// The exporter label of RFC 5764 §4.2.
    public static let exporterLabel = "EXTRACTOR-dtls_srtp"

    public let profile: SRTPProfile
    /// The exporter output as it came (for comparing with another implementation's).
    public let exported: [UInt8]
    /// Which DTLS role this endpoint had: it decides which half is ours.
    public let role: DTLSRole

    /// Nil unless `exported` is exactly as long as the profile's layout.
    public init?(profile: SRTPProfile, exported: [UInt8], role: DTLSRole) {
        guard exported.count == profile.keyingMaterialLength else { return nil }
        self.profile = profile
        self.exported = exported
        self.role = role
    }

    /// Master key then salt, as libsrtp2 takes them, for the packets we send.
    public var localKeyAndSalt: [UInt8] { keyAndSalt(of: role) }

    /// Master key then salt for the packets the remote sends.
    public var remoteKeyAndSalt: [UInt8] { keyAndSalt(of: role == .client ? .server : .client) }

    private func keyAndSalt(of writer: DTLSRole) -> [UInt8] {
        let keyLength = profile.masterKeyLength
        let saltLength = profile.masterSaltLength
        let keyStart = writer == .client ? 0 : keyLength
        let saltStart = 2 * keyLength + (writer == .client ? 0 : saltLength)
        return Array(exported[keyStart..<keyStart + keyLength]) + Array(exported[saltStart..<saltStart + saltLength])
    }
}
#endif
