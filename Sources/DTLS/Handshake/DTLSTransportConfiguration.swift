#if WebRTC
// The knobs of one DTLS association. Retransmission follows RFC 6347 §4.2.4.1 (an initial timer,
// doubled each time it fires, capped), with WebRTC's shorter start: browsers begin near 50–100 ms
// rather than the RFC's 1 s, as a call cannot wait seconds for one lost datagram.

import SDP

/// How a `DTLSTransport` behaves.
public struct DTLSTransportConfiguration: Sendable {
    /// Client (`a=setup:active`) or server.
    public var role: DTLSRole
    /// This endpoint's certificate.
    public var certificate: DTLSCertificate
    /// What the remote's certificate must hash to (its `a=fingerprint`), with that hash function.
    public var remoteFingerprint: DTLSFingerprint
    /// The profiles offered (client) or accepted (server), most preferred first.
    public var srtpProfiles: [SRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80]
    /// The first retransmission timer of a flight.
    public var initialRetransmitTimeout: Duration = .milliseconds(100)
    /// The longest the timer grows to by doubling.
    public var maximumRetransmitTimeout: Duration = .seconds(3)
    /// A handshake not complete this long after `start` fails.
    public var handshakeTimeout: Duration = .seconds(10)
    /// The largest datagram sent (OpenSSL fragments handshake messages to fit).
    public var mtu: Int = 1200
    /// Datagrams longer than this are dropped unread (no DTLS 1.2 record needs more).
    public var maximumDatagram: Int = 16_384 + 2_048

    public init(role: DTLSRole, certificate: DTLSCertificate, remoteFingerprint: DTLSFingerprint) {
        self.role = role
        self.certificate = certificate
        self.remoteFingerprint = remoteFingerprint
    }
}
#endif
