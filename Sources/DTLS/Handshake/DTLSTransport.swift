#if WebRTC
import COpenSSL
import SDP
import ZoneCore

// The DTLS 1.2 handshake of DTLS-SRTP (RFC 6347, RFC 5764, RFC 5763) as a sans-I/O machine:
// OpenSSL does the cryptography and the state machine of the handshake; this machine feeds it
// one datagram at a time through a `DatagramPipe`, passes on what it writes, runs its
// retransmission timer on the `now` it is given (RFC 6347 §4.2.4), bounds the whole handshake,
// checks the remote certificate against the signaled fingerprint (RFC 8122 §5, RFC 8827 §6.5)
// and, once connected, hands out the SRTP profile and the exporter's keys (RFC 5764 §4.2).

/// One DTLS association on one 5-tuple.
public final class DTLSTransport: SansIOMachine {
    /// What happened.
    public enum Input: Sendable {
        /// Begin: the client sends its ClientHello, the server waits for one.
        case start
        /// A datagram from the remote that RFC 7983 classified as DTLS (first byte 20–63).
        case datagram([UInt8])
        /// `nextDeadline` has passed.
        case timer
        /// We end a connected association: its close_notify alert goes to the remote (RFC 5246 §7.2.1,
        /// RFC 9147 §4.7); nothing is read after it.
        case close
    }

    /// What to do or know.
    public enum Output: Hashable, Sendable {
        /// Send this datagram to the remote.
        case transmit([UInt8])
        /// The handshake completed: the negotiated profile and the SRTP keys.
        case connected(SRTPProfile, SRTPKeyingMaterial)
        /// The association ended without keys, or a connected one hit a fatal alert.
        case failed(DTLSFailure)
        /// The remote closed a connected association (close_notify).
        case closed
    }

    /// Where the association is.
    public enum State: Hashable, Sendable {
        /// Not started.
        case idle
        /// Handshaking; it must complete by `deadline`.
        case handshaking(deadline: Instant)
        /// Keys exported; SRTP may flow.
        case connected(SRTPProfile)
        /// Ended without keys, or by a fatal alert.
        case failed(DTLSFailure)
        /// Closed: by the remote's close_notify, or by ours (`Input.close`).
        case closed
    }

    /// What came in and what was made of it.
    public struct Counters: Hashable, Sendable {
        /// Datagrams handed to OpenSSL.
        public var datagramsRead = 0
        /// Datagrams written.
        public var datagramsWritten = 0
        /// Flights resent because their timer fired.
        public var timerRetransmissions = 0
        /// Datagrams dropped unread: not DTLS by RFC 7983, shorter than a record header, too long.
        public var droppedInvalid = 0
        /// Datagrams dropped because the association had ended.
        public var droppedAfterEnd = 0
        /// Application-data records after the handshake (DTLS-SRTP carries none; dropped).
        public var droppedApplicationData = 0
        /// Datagrams dropped unread because a protected record in them was shorter than the
        /// negotiated cipher allows (`ProtectedRecordScreen`).
        public var droppedShortRecords = 0
    }

    /// DTLS 1.2 record header: type, version, epoch, sequence number, length (RFC 6347 §4.1).
    static let recordHeaderLength = 13

    public let configuration: DTLSTransportConfiguration
    public private(set) var state: State = .idle
    public private(set) var counters = Counters()
    /// The remote certificate's fingerprint once seen (whether or not it matched), with the hash
    /// function of the signaled one.
    public private(set) var remoteFingerprint: DTLSFingerprint?

    private let ssl: OpaquePointer
    private let pipe: DatagramPipe
    private var outputs = OutputQueue<Output>()
    private var retransmitAt: Instant?
    private var retransmitTimeout: Duration
    private var timerStartsSeen = 0
    private var fingerprintFailure: DTLSFailure?
    private var readBuffer = [UInt8](repeating: 0, count: 2_048)
    private var recordScreen = ProtectedRecordScreen()

    /// Sets up OpenSSL for one association; throws only for local faults (no context, no key).
    public init(configuration: DTLSTransportConfiguration) throws(DTLSSetupError) {
        guard OpenSSLLibrary.ready else { throw DTLSSetupError("OpenSSL failed to initialize") }
        let profiles = configuration.srtpProfiles.map(\.name).joined(separator: ":")
        let context = try configuration.certificate.context(srtpProfiles: profiles, make: DTLSTransport.makeContext)
        guard let ssl = SSL_new(context) else {
            throw DTLSSetupError("SSL_new: \(OpenSSLError.drainReasons())")
        }
        self.ssl = ssl
        self.configuration = configuration
        self.pipe = DatagramPipe(mtu: configuration.mtu)
        self.retransmitTimeout = configuration.initialRetransmitTimeout
        guard let bio = pipe.makeBIO() else {
            SSL_free(ssl)
            throw DTLSSetupError("BIO_new failed")
        }
        SSL_set_bio(ssl, bio, bio)
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_options(ssl, zonertc_SSL_OP_NO_QUERY_MTU())
        _ = zonertc_SSL_set_mtu(ssl, configuration.mtu)
        DTLS_set_timer_cb(ssl) { ssl, previous in
            DTLSTransport.of(ssl)?.openSSLTimerDuration(previous: previous) ?? 1_000_000
        }
        switch configuration.role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
    }

    deinit {
        SSL_free(ssl)  // and with it the SSL's reference to the certificate's shared context
    }

    /// What every association with one certificate and SRTP profile list shares: the certificate and key,
    /// DTLS 1.2 only, the profiles, and the verify callback (which finds its transport through the SSL).
    /// Made once per certificate and profile list (`DTLSCertificate.context`): OpenSSL fetches its methods
    /// and ciphers for each new context, per leg otherwise.
    private static func makeContext(certificate: DTLSCertificate, srtpProfiles profiles: String)
        throws(DTLSSetupError) -> OpaquePointer {
        guard let context = SSL_CTX_new(DTLS_method()) else { throw DTLSSetupError("SSL_CTX_new failed") }
        // Self-signed certificates: the chain means nothing, the fingerprint everything
        // (set before SSL_new, which copies the verify mode).
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        // Shared by every association of this certificate: none may resume another's session, which would
        // skip the fingerprint check below.
        zonertc_SSL_CTX_disable_resumption(context)
        SSL_CTX_set_cert_verify_callback(context, { store, _ in
            guard let store, let ssl = zonertc_SSL_of_store_ctx(store), let transport = DTLSTransport.of(ssl),
                  let certificate = X509_STORE_CTX_get0_cert(store)
            else { return 0 }
            return transport.verifyRemote(certificate) ? 1 : 0
        }, nil)
        // SSL_CTX_set_tlsext_use_srtp returns 0 on success, unlike its neighbours.
        guard zonertc_SSL_CTX_set_proto_versions(context, DTLS1_2_VERSION, DTLS1_2_VERSION) == 1,
              SSL_CTX_use_certificate(context, certificate.certificate) == 1,
              SSL_CTX_use_PrivateKey(context, certificate.key) == 1,
              !profiles.isEmpty, SSL_CTX_set_tlsext_use_srtp(context, profiles) == 0
        else {
            let reason = OpenSSLError.drainReasons()
            SSL_CTX_free(context)
            throw DTLSSetupError("DTLS context: \(reason.isEmpty ? "no SRTP profile" : reason)")
        }
        return context
    }

    // MARK: SansIOMachine

    public func handle(_ input: Input, now: Instant) {
        switch input {
        case .start:
            guard case .idle = state else { return }
            begin(now)
        case .datagram(let datagram):
            receive(datagram, now: now)
        case .timer:
            timerFired(now)
        case .close:
            close()
        }
    }

    public func pollOutput() -> Output? { outputs.pop() }

    public var nextDeadline: Instant? {
        guard case .handshaking(let deadline) = state else { return nil }
        return Instant.earliest(retransmitAt, deadline)
    }

    // MARK: Steps

    private func begin(_ now: Instant) {
        state = .handshaking(deadline: now + configuration.handshakeTimeout)
        // The client's first SSL_do_handshake writes the ClientHello; the server's reads nothing.
        advanceHandshake(now)
    }

    private func receive(_ datagram: [UInt8], now: Instant) {
        switch state {
        case .failed, .closed:
            counters.droppedAfterEnd += 1
            return
        case .idle, .handshaking, .connected:
            break
        }
        guard datagram.count >= DTLSTransport.recordHeaderLength, datagram.count <= configuration.maximumDatagram,
              (20...63).contains(datagram[0])
        else {
            counters.droppedInvalid += 1
            return
        }
        if recordScreen.minimumFragment == 0 {
            recordScreen.minimumFragment = ProtectedRecordScreen.minimumFragment(of: ssl)
        }
        guard recordScreen.admits(datagram) else {
            counters.droppedShortRecords += 1
            return
        }
        if case .idle = state { begin(now) }
        counters.datagramsRead += 1
        pipe.incoming = datagram
        switch state {
        case .handshaking: advanceHandshake(now)
        case .connected: readAfterHandshake()
        case .idle, .failed, .closed: break
        }
        // Whatever OpenSSL did not read (a record it discarded whole) goes.
        pipe.incoming = nil
    }

    private func timerFired(_ now: Instant) {
        guard case .handshaking(let deadline) = state else { return }
        if now >= deadline {
            fail(.handshakeTimedOut(after: configuration.handshakeTimeout))
            return
        }
        guard let retransmitAt, now >= retransmitAt else { return }
        _ = pipe.expireOpenSSLTimer()
        ERR_clear_error()
        if zonertc_DTLSv1_handle_timeout(ssl) < 0 {
            fail(.protocolError(OpenSSLError.drainReasons()))
            return
        }
        counters.timerRetransmissions += 1
        retransmitTimeout = min(retransmitTimeout * 2, configuration.maximumRetransmitTimeout)
        flushWritten()
        self.retransmitAt = nil
        updateRetransmitTimer(now, restartedByTimer: true)
    }

    private func advanceHandshake(_ now: Instant) {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        flushWritten()
        if result == 1 {
            finishHandshake()
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            updateRetransmitTimer(now, restartedByTimer: false)
        default:
            fail(fingerprintFailure ?? .protocolError(OpenSSLError.drainReasons()))
        }
    }

    private func finishHandshake() {
        guard fingerprintFailure == nil, remoteFingerprint == configuration.remoteFingerprint else {
            fail(fingerprintFailure ?? .protocolError("the remote presented no certificate"))
            return
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl),
              let profile = SRTPProfile(id: UInt16(truncatingIfNeeded: selected.pointee.id))
        else {
            fail(.noSRTPProfile)
            return
        }
        var exported = [UInt8](repeating: 0, count: profile.keyingMaterialLength)
        let label = SRTPKeyingMaterial.exporterLabel
        guard SSL_export_keying_material(ssl, &exported, exported.count, label, label.utf8.count, nil, 0, 0) == 1,
              let keys = SRTPKeyingMaterial(profile: profile, exported: exported, role: configuration.role)
        else {
            fail(.protocolError("keying material export: \(OpenSSLError.drainReasons())"))
            return
        }
        state = .connected(profile)
        retransmitAt = nil
        outputs.append(.connected(profile, keys))
    }

    /// After the handshake OpenSSL still answers a retransmitted final flight and reads alerts.
    private func readAfterHandshake() {
        ERR_clear_error()
        while true {
            let read = SSL_read(ssl, &readBuffer, Int32(readBuffer.count))
            if read > 0 {
                counters.droppedApplicationData += 1
                continue
            }
            let error = SSL_get_error(ssl, read)
            flushWritten()
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
                outputs.append(.closed)
                return
            default:
                fail(.protocolError(OpenSSLError.drainReasons()))
                return
            }
        }
    }

    /// Writes close_notify (OpenSSL's SSL_shutdown; we do not wait for the remote's) and stops.
    private func close() {
        guard case .connected = state else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        flushWritten()
        state = .closed
        retransmitAt = nil
    }

    private func fail(_ failure: DTLSFailure) {
        flushWritten()  // the alert OpenSSL wrote, if any, tells the remote why
        state = .failed(failure)
        retransmitAt = nil
        outputs.append(.failed(failure))
    }

    private func flushWritten() {
        for datagram in pipe.outgoing {
            counters.datagramsWritten += 1
            outputs.append(.transmit(datagram))
        }
        pipe.outgoing.removeAll(keepingCapacity: true)
    }

    /// Follows OpenSSL's timer: a new flight starts at the initial timeout, a resent one keeps the
    /// doubled one; no flight outstanding, no timer.
    private func updateRetransmitTimer(_ now: Instant, restartedByTimer: Bool) {
        guard pipe.timerRunning else {
            retransmitAt = nil
            retransmitTimeout = configuration.initialRetransmitTimeout
            return
        }
        if pipe.timerStarts != timerStartsSeen {
            timerStartsSeen = pipe.timerStarts
            if !restartedByTimer { retransmitTimeout = configuration.initialRetransmitTimeout }
            retransmitAt = now + retransmitTimeout
        } else if retransmitAt == nil {
            retransmitAt = now + retransmitTimeout
        }
    }

    // MARK: OpenSSL callbacks

    fileprivate static func of(_ ssl: OpaquePointer?) -> DTLSTransport? {
        guard let ssl, let data = SSL_get_ex_data(ssl, 0) else { return nil }
        return Unmanaged<DTLSTransport>.fromOpaque(data).takeUnretainedValue()
    }

    /// RFC 5763 §5: the certificate is acceptable iff it hashes to the signaled fingerprint.
    fileprivate func verifyRemote(_ certificate: OpaquePointer) -> Bool {
        let expected = configuration.remoteFingerprint
        guard let digest = DTLSCertificate.digest(of: certificate, hashFunction: expected.hashFunction) else {
            fingerprintFailure = .unusableFingerprint(hashFunction: expected.hashFunction)
            return false
        }
        let actual = DTLSFingerprint(hashFunction: expected.hashFunction, digest: digest)
        remoteFingerprint = actual
        guard actual == expected else {
            fingerprintFailure = .fingerprintMismatch(expected: configuration.remoteFingerprint, actual: actual)
            return false
        }
        return true
    }

    /// The duration OpenSSL puts on its wall-clock timer (microseconds). When its deadline is
    /// ours to expire (`DatagramPipe`), an hour, so it never fires on its own between inputs;
    /// otherwise our own schedule, so a real driver's wall clock and OpenSSL's agree.
    fileprivate func openSSLTimerDuration(previous: UInt32) -> UInt32 {
        if pipe.canExpireOpenSSLTimer { return 3_600_000_000 }
        let next = previous == 0 ? configuration.initialRetransmitTimeout : retransmitTimeout
        return UInt32(clamping: next.nanoseconds / 1_000)
    }
}
#endif
