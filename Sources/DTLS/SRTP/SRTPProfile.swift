#if WebRTC
// The SRTP protection profiles DTLS-SRTP negotiates (RFC 5764 §4.1.2, RFC 7714 §14.2) and the
// sizes of the master keys and salts each takes from the exporter (RFC 5764 §4.2).

/// An SRTP protection profile of the DTLS `use_srtp` extension.
public enum SRTPProfile: UInt16, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// AES-128 counter mode with an 80-bit HMAC-SHA1 tag (RFC 5764 §4.1.2).
    case aes128CMSHA1_80 = 0x0001
    /// AES-128 GCM with a 16-byte tag (RFC 7714 §14.2).
    case aeadAES128GCM = 0x0007

    /// The name OpenSSL and the IANA registry use.
    public var name: String {
        switch self {
        case .aes128CMSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        }
    }

    public var description: String { name }

    /// Master key length in bytes.
    public var masterKeyLength: Int { 16 }

    /// Master salt length in bytes (RFC 3711 §8.2: 112 bits; RFC 7714 §12: 96 bits).
    public var masterSaltLength: Int {
        switch self {
        case .aes128CMSHA1_80: 14
        case .aeadAES128GCM: 12
        }
    }

    /// How many bytes the exporter yields: two keys and two salts (RFC 5764 §4.2).
    public var keyingMaterialLength: Int { 2 * (masterKeyLength + masterSaltLength) }

    /// The profile with IANA number `id`, if we support it.
    public init?(id: UInt16) { self.init(rawValue: id) }
}
#endif
