// The stage between the selected ICE pair and the call's media: with DTLS-SRTP, the handshake on
// the pair (roles from `a=setup`, RFC 5763 §5 / RFC 8842 §5; the remote's certificate checked
// against its `a=fingerprint`) and SRTP once it is done; plain, a pass-through. Either way the
// call sees one shape: datagrams in, datagrams out, media released once the path is secured
// (plain: as soon as a pair is selected). A DTLS failure, or descriptions that disagree about
// DTLS, end the call with the reason and no media flows.
#if WebRTC
import DTLS
#endif
import SDP
import Signaling
import ZoneCore

/// Media protection on the selected pair, sans-I/O. Noncopyable: its DTLS session is one.
struct MediaProtection: ~Copyable {
    /// Something that happened to the protection.
    enum Input {
        /// The remote's description: does it agree about DTLS, and if so who starts the handshake.
        case remoteDescription(SessionDescription)
        /// A pair is selected: plain media flows now; DTLS starts its handshake (once).
        case pairSelected
        /// Application data from the selected pair.
        case received([UInt8])
        /// An RTP or RTCP packet of the media, to send once secured (dropped before).
        case send([UInt8])
        /// `nextDeadline` may have passed (DTLS retransmissions).
        case timer
        /// We leave the leg (`MediaGoodbye`): with DTLS its close_notify, plain `plainGoodbye`, goes out
        /// as `.goodbye`; nothing is protected or unprotected after. Only once secured.
        case sayGoodbye(plainGoodbye: [UInt8])
    }

    /// What the protection wants done or reported.
    enum Output {
        /// Send on the selected pair.
        case transmit([UInt8])
        /// An RTP or RTCP packet for the media (already authenticated and decrypted).
        case media([UInt8])
        /// Media may flow.
        case secured
        /// The call cannot go on; the reason is for the user.
        case failed(String)
        /// A datagram of our goodbye, to send on the selected pair (and again: `MediaGoodbye`).
        case goodbye([UInt8])
        /// The remote closed the DTLS association (its close_notify, authenticated by the association's
        /// keys): it left.
        case remoteClosed
    }

    /// Where the protection is.
    enum Phase: Equatable {
        /// No pair is selected yet (with DTLS, the session is made when the remote's description
        /// arrives).
        case awaitingPair
        /// The pair is selected and DTLS is handshaking on it.
        case handshaking
        /// Media may flow.
        case secured
        /// The descriptions disagree about DTLS, or DTLS failed: no media ever flows (the call ends
        /// with the reason).
        case failed
        /// We said goodbye: no media flows any more.
        case closed
    }

    /// What the protection dropped.
    struct Drops: Equatable {
        /// Media packets to send that came before the path was secured, or after it failed.
        var unsecuredSends = 0
        /// Datagrams that arrived before DTLS was set up (no remote description yet).
        var receivedBeforeSetup = 0
    }

    let security: MediaProtectionMode
    /// A DTLS handshake not done this long after it starts fails the call.
    let handshakeTimeout: Duration
    private(set) var phase = Phase.awaitingPair
    private(set) var drops = Drops()
    private var outputs = OutputQueue<Output>()
    #if WebRTC
    /// The DTLS-SRTP session, from the remote's description on; it outlives ICE restarts and
    /// renegotiations once its handshake began (the handshake is done once per call).
    private var transport: SecureMediaTransport?
    /// The role and remote fingerprint `transport` was made with.
    private var transportSetup: (role: DTLSRole, fingerprint: DTLSFingerprint)?
    #endif

    init(security: MediaProtectionMode, handshakeTimeout: Duration = .seconds(10)) {
        self.security = security
        self.handshakeTimeout = handshakeTimeout
    }

    /// Feeds an input at `now`.
    mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .remoteDescription(let description): remoteDescription(description)
        case .pairSelected: pairIsSelected(now: now)
        case .received(let bytes): received(bytes, now: now)
        case .send(let packet): send(packet, now: now)
        case .timer: timer(now: now)
        case .sayGoodbye(let plainGoodbye): sayGoodbye(plainGoodbye, now: now)
        }
    }

    private mutating func sayGoodbye(_ plainGoodbye: [UInt8], now: Instant) {
        guard phase == .secured else { return }
        phase = .closed
        switch security {
        case .none:
            outputs.append(.goodbye(plainGoodbye))
        #if WebRTC
        case .dtlsSRTP:
            transport?.handle(.close, now: now)
            while let output = transport?.pollOutput() {
                if case .transmit(let datagram) = output { outputs.append(.goodbye(datagram)) }
            }
        #endif
        }
    }

    private mutating func remoteDescription(_ description: SessionDescription) {
        guard let section = description.media.first(where: { $0.kind == .video && !$0.isRejected }) else { return }
        let fingerprint = description.fingerprints(for: section).first
        switch security {
        case .none:
            if fingerprint != nil {
                fail("the remote requires DTLS-SRTP (its description has a=fingerprint); "
                     + "this peer runs --media-security none")
            }
        #if WebRTC
        case .dtlsSRTP(let certificate):
            // Once its handshake began, DTLS outlives ICE restarts and renegotiations. Before that, the
            // current epoch's description decides: an epoch given up before its pair was selected (an
            // offer answered and then superseded by the other side's, whose answerer takes the active
            // role, RFC 8842 §5.2) must not leave both ends in the same role.
            guard transport == nil || phase == .awaitingPair else { return }
            guard let fingerprint else {
                fail("the remote's description has no a=fingerprint (plain RTP/AVPF); "
                     + "this peer requires --media-security dtls-srtp")
                return
            }
            guard let role = MediaProtection.dtlsRole(remote: description.setupRole(for: section),
                                                     remoteIsOffer: description.type == .offer) else {
                fail("the remote's a=setup leaves no DTLS role for us "
                     + "(\(description.setupRole(for: section).map { "\($0)" } ?? "none"))")
                return
            }
            if let made = transportSetup, made.role == role, made.fingerprint == fingerprint { return }
            do {
                var configuration = DTLSTransportConfiguration(role: role, certificate: certificate,
                                                               remoteFingerprint: fingerprint)
                configuration.handshakeTimeout = handshakeTimeout
                transport = try SecureMediaTransport(configuration: configuration)
                transportSetup = (role, fingerprint)
            } catch {
                fail("DTLS could not be set up: \(error)")
            }
        #endif
        }
    }

    #if WebRTC
    /// RFC 5763 §5: `active` starts the handshake (the DTLS client). Answering, we take the role
    /// our own answer states (active when the offer leaves it to us, as JSEP advises); offering
    /// actpass, we take the other side of the answer's.
    static func dtlsRole(remote: DTLSSetupRole?, remoteIsOffer: Bool) -> DTLSRole? {
        guard let remote else { return nil }
        if remoteIsOffer {
            guard let ours = remote.answerRole(preferring: .active) else { return nil }
            return ours == .active ? .client : .server
        }
        switch remote {
        case .active: return .server
        case .passive: return .client
        case .activePassive, .holdConnection: return nil
        }
    }
    #endif

    private mutating func pairIsSelected(now: Instant) {
        guard phase == .awaitingPair else { return }
        switch security {
        case .none:
            secure()
        #if WebRTC
        case .dtlsSRTP:
            phase = .handshaking
            transport?.handle(.start, now: now)
            drainTransport()
        #endif
        }
    }

    private mutating func received(_ bytes: [UInt8], now: Instant) {
        switch security {
        case .none:
            outputs.append(.media(bytes))
        #if WebRTC
        case .dtlsSRTP:
            guard transport != nil else {
                drops.receivedBeforeSetup += 1
                return
            }
            transport?.handle(.received(bytes), now: now)
            drainTransport()
        #endif
        }
    }

    private mutating func send(_ packet: [UInt8], now: Instant) {
        guard phase == .secured else {
            drops.unsecuredSends += 1
            return
        }
        switch security {
        case .none:
            outputs.append(.transmit(packet))
        #if WebRTC
        case .dtlsSRTP:
            let isRTCP = packet.count >= 2 && (192...223).contains(packet[1])  // RFC 5761 §4
            transport?.handle(isRTCP ? .sendRTCP(packet) : .sendRTP(packet), now: now)
            drainTransport()
        #endif
        }
    }

    private mutating func timer(now: Instant) {
        #if WebRTC
        guard let deadline = transport?.nextDeadline, deadline <= now else { return }
        transport?.handle(.timer, now: now)
        drainTransport()
        #endif
    }

    var nextDeadline: Instant? {
        #if WebRTC
        return transport?.nextDeadline
        #else
        return nil
        #endif
    }

    mutating func pollOutput() -> Output? { outputs.pop() }

    private mutating func secure() {
        guard phase == .awaitingPair || phase == .handshaking else { return }
        phase = .secured
        outputs.append(.secured)
    }

    private mutating func fail(_ reason: String) {
        phase = .failed
        outputs.append(.failed(reason))
    }

    #if WebRTC
    private mutating func drainTransport() {
        while let output = transport?.pollOutput() {
            switch output {
            case .transmit(let datagram): outputs.append(.transmit(datagram))
            case .rtp(let packet), .rtcp(let packet): outputs.append(.media(packet))
            case .connected: secure()
            case .failed(let failure): fail("\(failure)")
            case .closed: outputs.append(.remoteClosed)
            case .stun: break  // ICE has taken STUN before data reaches us
            }
        }
    }
    #endif
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension MediaProtection: SansIOMachine {}
