// How a call's media is protected on the selected pair: DTLS-SRTP as WebRTC requires (RFC 8827
// §6.5, RFC 5763/5764) when this build has the `WebRTC` trait, or plain RTP/AVPF — kept for
// builds without the trait and for peers that speak it. Both sides must agree: the SDP says which
// (`UDP/TLS/RTP/SAVPF` with `a=fingerprint` and `a=setup`, or `RTP/AVPF` without).
#if WebRTC
import DTLS
#endif
import Signaling

/// The protection a call's media gets.
public enum MediaSecurity: Sendable {
    /// Plain RTP/RTCP (`RTP/AVPF`).
    case none
    #if WebRTC
    /// DTLS-SRTP with this certificate (`UDP/TLS/RTP/SAVPF`).
    case dtlsSRTP(DTLSCertificate)
    #endif

    /// The names `--media-security` takes.
    public static let names = ["dtls-srtp", "none"]

    /// What a peer uses unless told: dtls-srtp when this build has it, none otherwise.
    public static var defaultName: String {
        #if WebRTC
        "dtls-srtp"
        #else
        "none"
        #endif
    }

    /// The protection called `name` (`dtls-srtp` with this process's certificate, or `none`).
    public init(named name: String) throws(MediaSecurityError) {
        switch name {
        case "none":
            self = .none
        case "dtls-srtp":
            #if WebRTC
            do {
                self = .dtlsSRTP(try DTLSCertificate.forProcess())
            } catch {
                throw MediaSecurityError("dtls-srtp: \(error)")
            }
            #else
            throw MediaSecurityError("dtls-srtp needs a build with the WebRTC trait "
                                     + "(apt-get install libssl-dev libsrtp2-dev; swift build --traits WebRTC)")
            #endif
        default:
            throw MediaSecurityError("'\(name.prefix(40))': choose \(MediaSecurity.names.joined(separator: " or "))")
        }
    }

    /// What our descriptions say about DTLS (nil: plain RTP/AVPF).
    var sdp: SilentVideoConfiguration.DTLS? {
        switch self {
        case .none: nil
        #if WebRTC
        case .dtlsSRTP(let certificate): SilentVideoConfiguration.DTLS(fingerprint: certificate.fingerprint)
        #endif
        }
    }
}

/// A `--media-security` value that cannot be used.
public struct MediaSecurityError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
