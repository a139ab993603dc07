// How a call's media is protected on the selected pair: DTLS-SRTP as WebRTC requires (RFC 8827
// §6.5, RFC 5763/5764) when this build has the `WebRTC` trait, or plain RTP/AVPF — kept for
// builds without the trait and for peers that speak it. Both sides must agree: the SDP says which
// (`UDP/TLS/RTP/SAVPF` with `a=fingerprint` and `a=setup`, or `RTP/AVPF` without).
#if WebRTC
import DTLS
#endif
import SDP
import Signaling

/// The protection a call's media gets.
/// (`MediaSecurity`, in SDP, is what a description says; this is what this process does, with
/// its certificate.)
public enum MediaProtectionMode: Sendable {
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
    public init(named name: String) throws(MediaProtectionModeError) {
        switch name {
        case "none":
            self = .none
        case "dtls-srtp":
            #if WebRTC
            do {
                self = .dtlsSRTP(try DTLSCertificate.forProcess())
            } catch {
                throw MediaProtectionModeError("dtls-srtp: \(error)")
            }
            #else
            throw MediaProtectionModeError("dtls-srtp needs a build with the WebRTC trait "
                                     + "(apt-get install libssl-dev libsrtp2-dev; swift build --traits WebRTC)")
            #endif
        default:
            throw MediaProtectionModeError("'\(name.prefix(40))': choose \(MediaProtectionMode.names.joined(separator: " or "))")
        }
    }

    /// Starts paying OpenSSL's and libsrtp2's first-use costs (tens of milliseconds) on a thread of
    /// its own, once per process, so that they are not paid between a call's keys and its first
    /// frame; `warmedUp()` waits for it.
    public func warmUp() {
        #if WebRTC
        if case .dtlsSRTP(let certificate) = self { DTLSWarmUp.startOnce(certificate: certificate) }
        #endif
    }

    /// Returns once the warm-up `warmUp()` started is done (at once for `none`).
    public func warmedUp() async {
        #if WebRTC
        if case .dtlsSRTP = self { await DTLSWarmUp.finished() }
        #endif
    }

    /// Returns once any warm-up this process started is done. A process calls it before it exits,
    /// so that no thread of its own is inside OpenSSL or libsrtp2 while the C libraries' exit
    /// handlers run (an early error otherwise crashed the process after its message: issue 14).
    public static func warmUpSettled() async {
        #if WebRTC
        await DTLSWarmUp.finished()
        #endif
    }

    /// What the SDP calls this protection (and so the dialect our descriptions speak).
    public var security: MediaSecurity {
        switch self {
        case .none: .none
        #if WebRTC
        case .dtlsSRTP: .dtlsSRTP
        #endif
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
public struct MediaProtectionModeError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
