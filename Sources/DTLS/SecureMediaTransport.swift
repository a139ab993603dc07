#if WebRTC
import STUN
import ZoneCore

// One 5-tuple carries STUN, DTLS and SRTP/SRTCP at once (RFC 5764 §5.1.2, RFC 8842): this machine
// sorts what arrives by its first byte (RFC 7983 §7, through the one demultiplexer in STUN), runs
// the DTLS handshake, and once it has keys protects what the media sends and unprotects what
// arrives (RFC 5761 §4 separates RTP from RTCP). STUN is handed back for the ICE agent; nothing
// unprotected reaches the media, and no media leaves before the keys exist.
//
// SRTP can arrive before our keys do: the DTLS server finishes first and may send at once, while
// its last flight to us is still on the way (or lost and being resent). Those packets are held,
// a bounded few, and unprotected once the keys come — a receiver cannot ask again for packets
// from before the first one it saw.

/// DTLS-SRTP on one selected ICE pair.
public final class SecureMediaTransport: SansIOMachine {
    /// What happened.
    public enum Input: Sendable {
        /// Begin the handshake.
        case start
        /// A datagram arrived on the pair (of any kind).
        case received([UInt8])
        /// The media wants to send an RTP packet.
        case sendRTP([UInt8])
        /// The media wants to send an RTCP packet (compound or not).
        case sendRTCP([UInt8])
        /// `nextDeadline` has passed.
        case timer
        /// We leave: DTLS sends its close_notify alert; no media is protected or unprotected after.
        case close
    }

    /// What to do or know.
    public enum Output: Hashable, Sendable {
        /// Send this datagram on the pair.
        case transmit([UInt8])
        /// A STUN message for the ICE agent (first byte 0–3).
        case stun([UInt8])
        /// An authenticated, decrypted RTP packet.
        case rtp([UInt8])
        /// An authenticated, decrypted RTCP packet.
        case rtcp([UInt8])
        /// Keys are in place: media may flow.
        case connected(SRTPProfile)
        /// The handshake failed (or a connected association hit a fatal alert); no media flows.
        case failed(DTLSFailure)
        /// The remote closed the association.
        case closed
    }

    /// What was dropped and why; SRTP's own counts are in `srtp`.
    public struct Counters: Hashable, Sendable {
        /// Datagrams whose first byte is none of STUN, DTLS or RTP/RTCP (ZRTP, ChannelData, other).
        public var droppedUnknownKind = 0
        /// SRTP/SRTCP that arrived before the keys and found the hold full, or after a failure.
        public var droppedBeforeKeys = 0
        /// SRTP/SRTCP held until the keys came.
        public var heldBeforeKeys = 0
        /// Media the caller asked to send before the keys (or after a failure).
        public var refusedBeforeKeys = 0
    }

    public let dtls: DTLSTransport
    /// The SRTP session, once the handshake gave keys.
    public private(set) var srtp: SRTPSession?
    public private(set) var counters = Counters()
    private var outputs = OutputQueue<Output>()
    /// SRTP/SRTCP that came before the keys, to unprotect once they exist.
    private var heldMedia: [[UInt8]] = []
    /// How many packets may wait for the keys (about a tenth of a second of video).
    public static let heldMediaLimit = 64

    public init(configuration: DTLSTransportConfiguration) throws(DTLSSetupError) {
        dtls = try DTLSTransport(configuration: configuration)
    }

    public func handle(_ input: Input, now: Instant) {
        switch input {
        case .start:
            dtls.handle(.start, now: now)
        case .timer:
            dtls.handle(.timer, now: now)
        case .close:
            dtls.handle(.close, now: now)
            srtp = nil
            heldMedia.removeAll()
        case .received(let datagram):
            receive(datagram, now: now)
        case .sendRTP(var packet):
            guard let srtp else { counters.refusedBeforeKeys += 1; return }
            if srtp.protectRTP(&packet) { outputs.append(.transmit(packet)) }
        case .sendRTCP(var packet):
            guard let srtp else { counters.refusedBeforeKeys += 1; return }
            if srtp.protectRTCP(&packet) { outputs.append(.transmit(packet)) }
        }
        drainDTLS()
    }

    public func pollOutput() -> Output? { outputs.pop() }

    public var nextDeadline: Instant? { dtls.nextDeadline }

    private func receive(_ datagram: [UInt8], now: Instant) {
        switch PacketDemultiplexer.classify(datagram) {
        case .stun:
            outputs.append(.stun(datagram))
        case .dtls:
            dtls.handle(.datagram(datagram), now: now)
        case .rtpOrRTCP:
            guard srtp != nil else {
                if awaitingKeys && heldMedia.count < SecureMediaTransport.heldMediaLimit {
                    heldMedia.append(datagram)
                    counters.heldBeforeKeys += 1
                } else {
                    counters.droppedBeforeKeys += 1
                }
                return
            }
            unprotect(datagram)
        case .zrtp, .turnChannel, .unknown:
            counters.droppedUnknownKind += 1
        }
    }

    /// Whether keys may still come (the handshake has not ended).
    private var awaitingKeys: Bool {
        switch dtls.state {
        case .idle, .handshaking: true
        case .connected, .failed, .closed: false
        }
    }

    private func unprotect(_ datagram: [UInt8]) {
        guard let srtp else { return }
        var packet = datagram
        if PacketDemultiplexer.isRTCP(datagram) {
            if srtp.unprotectRTCP(&packet) { outputs.append(.rtcp(packet)) }
        } else {
            if srtp.unprotectRTP(&packet) { outputs.append(.rtp(packet)) }
        }
    }

    /// Passes the DTLS machine's outputs on, in order, and keys SRTP when it connects.
    private func drainDTLS() {
        while let output = dtls.pollOutput() {
            switch output {
            case .transmit(let datagram):
                outputs.append(.transmit(datagram))
            case .connected(let profile, let keys):
                do {
                    srtp = try SRTPSession(keys: keys)
                    outputs.append(.connected(profile))
                    let held = heldMedia
                    heldMedia.removeAll()
                    for datagram in held { unprotect(datagram) }
                } catch {
                    outputs.append(.failed(.protocolError("SRTP: \(error)")))
                }
            case .failed(let failure):
                srtp = nil
                heldMedia.removeAll()
                outputs.append(.failed(failure))
            case .closed:
                srtp = nil
                outputs.append(.closed)
            }
        }
    }
}
#endif
