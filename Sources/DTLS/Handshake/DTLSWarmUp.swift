#if WebRTC
import Foundation
import Synchronization
import ZoneCore

// A process's first DTLS-SRTP association is far slower than the next ones. OpenSSL 3 loads its
// providers and fetches every algorithm (ECDH, ECDSA, SHA-256, AES-GCM, the exporter's PRF) on
// first use; and libsrtp2's first session is the expensive part: srtp_init self-tests every
// cipher, and Debian's libsrtp2 runs on NSS, whose first use initializes NSS (loading its soft
// token and running its self-tests) — about 20 ms here, measured on the wire between a peer's keys
// and its first SRTP packet. A call's peer makes exactly one association, so without this the
// whole cold cost lands between ICE connected and the first frame, on both sides. This runs one
// handshake in memory (the process certificate on both sides) and one SRTP round trip per profile
// when the process starts, on a thread of its own so that it overlaps opening the store and
// joining the room; the peer waits for it before the call starts (srtp_init alone took 60–130 ms
// on this loaded machine: its self-tests initialize and shut down NSS once per cipher). Its SRTP
// sessions are kept for the life of the process: libsrtp2 shuts NSS down when its last session
// goes, and the next one would pay the 20 ms again.

/// One in-memory DTLS-SRTP association to pay OpenSSL's and libsrtp2's first-use costs before a
/// call needs them.
public enum DTLSWarmUp {
    private static let warmed = Mutex<Bool>(false)

    /// SRTP sessions that keep libsrtp2's NSS initialized.
    private static let keptSessions = Mutex<[SRTPSession]>([])

    /// Entered while the warm-up thread runs.
    private static let running = DispatchGroup()

    /// `run` on a new thread the first time it is asked in this process; later calls do nothing.
    public static func startOnce(certificate: DTLSCertificate) {
        let first = warmed.withLock { (warmed: inout Bool) -> Bool in
            defer { warmed = true }
            return !warmed
        }
        guard first else { return }
        running.enter()
        Thread.detachNewThread {
            run(certificate: certificate)
            running.leave()
        }
    }

    /// Returns once a started warm-up has finished (at once if none runs). The warm-up is a bounded
    /// computation in memory — no I/O, no clock — so this wait is bounded too.
    public static func finished() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            running.notify(queue: .global()) { done.resume() }
        }
    }

    /// Runs a handshake between two transports holding `certificate` (on `now`, no clock read);
    /// true when both ended with keys. Only its SRTP sessions outlive the call.
    @discardableResult
    public static func run(certificate: DTLSCertificate) -> Bool {
        let fingerprint = certificate.fingerprint
        guard let client = try? DTLSTransport(configuration: DTLSTransportConfiguration(
                  role: .client, certificate: certificate, remoteFingerprint: fingerprint)),
              let server = try? DTLSTransport(configuration: DTLSTransportConfiguration(
                  role: .server, certificate: certificate, remoteFingerprint: fingerprint))
        else { return false }
        let now = Instant.seconds(1)
        server.handle(.start, now: now)
        client.handle(.start, now: now)
        var connected = 0
        // A DTLS 1.2 handshake is four flights; the bound only guards against a stall.
        for _ in 0..<16 {
            var moved = false
            for (from, to) in [(client, server), (server, client)] {
                while let output = from.pollOutput() {
                    moved = true
                    switch output {
                    case .transmit(let datagram): to.handle(.datagram(datagram), now: now)
                    case .connected(_, let keys):
                        connected += 1
                        if from === client { warmSRTP(keys) }
                    case .failed, .closed: return false
                    }
                }
            }
            if !moved { break }
        }
        return connected == 2
    }

    /// One RTP packet protected and unprotected under each profile (libsrtp2 and NSS set up);
    /// the sessions are kept.
    private static func warmSRTP(_ negotiated: SRTPKeyingMaterial) {
        keptSessions.withLock { kept in
            for profile in SRTPProfile.allCases {
                let exported = profile == negotiated.profile
                    ? negotiated.exported : [UInt8](repeating: 0x5a, count: profile.keyingMaterialLength)
                guard let ours = SRTPKeyingMaterial(profile: profile, exported: exported, role: .client),
                      let theirs = SRTPKeyingMaterial(profile: profile, exported: exported, role: .server),
                      let sender = try? SRTPSession(keys: ours), let receiver = try? SRTPSession(keys: theirs)
                else { continue }
                var packet: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0x5a, 0x5a, 0x5a, 0x5a]
                packet += [UInt8](repeating: 0, count: 100)
                _ = sender.protectRTP(&packet) && receiver.unprotectRTP(&packet)
                kept += [sender, receiver]
            }
        }
    }
}
#endif
