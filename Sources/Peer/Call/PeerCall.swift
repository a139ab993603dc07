// A call, sans-I/O: the signaling machine (records in the store), the ICE transports of its
// epochs, the media protection (DTLS-SRTP or plain) on the selected pair, and the media that
// flows on it (docs/ARCHITECTURE.md "A call, end to end"). The runner performs the store requests
// and moves datagrams and time; every decision is made here, so the simulator and the tests run
// exactly this.
//
// Where the call is, and what exists there, is one value: `state` (`PeerCallState`) owns the
// transports and the deadlines of each phase. What the parts produce passes through one place,
// `route`, which drains them in a fixed order — the transports, signaling, the protection, the
// media — and hands each output to its consumer, which only feeds other parts; nothing is polled
// anywhere else, so nothing polled is dropped (the shape of str0m's `do_poll_output`). A decision
// to end the call is taken where it is found: the goodbye it causes is routed after whatever was
// already queued. Hanging up is not the end: the call is `closing` until every transport it had,
// those ICE restarts retired included, has had its TURN deallocations answered or timed out, and
// `closed` after that — what a driver waits for.
//
// Noncopyable: a call has one owner (its driver, or a room holding it as one leg), and it owns its
// transports; a copy would share them. As a leg of a room's group call (`RoomCall`) its signaling is
// the room's: the room's negotiator of the pair sends its actions in (`.leg`) and takes the ICE
// events out (`takeLegEvents`); everything else — transports, protection, media, deadlines — is the
// same machine (`PeerCall+RoomLeg.swift`).

import ICE
import Media
import RecordStore
import SDP
import Signaling
import ZoneCore

/// One peer's side of a call.
public struct PeerCall: ~Copyable {
    /// Something that happened to the call.
    public enum Input: Sendable {
        /// Begin the call (set up the epoch, offer or wait for the offer).
        case start
        /// A store reply or push notification for the signaling machine.
        case signaling(CallSignaling.Event)
        /// A datagram arrived from `from` on the local socket bound to `to`.
        case datagram([UInt8], from: Endpoint, to: Endpoint)
        /// `nextDeadline` was reached.
        case timer
        /// The user ends the call: say goodbye through the store, stop ICE and media.
        case hangUp
        /// A leg of a room's group call: what the room's negotiator of the pair asks or reports.
        case leg(CallSignaling.Action)
        /// A leg of a room's group call: the room ended the leg (its signaling is done); hang up with
        /// `Ending`, draining the transports as any call does.
        case legEnded(Ending)
        /// A leg of a room's group call we leave: say goodbye to the remote on the selected pair
        /// (`MediaGoodbye`), before the room closes the leg.
        case sayGoodbye
    }

    /// Something the call wants done or reported.
    public enum Output: Sendable {
        /// Carry out a store request and feed back `.signaling(.reply(origin, outcome))`. Indirect:
        /// a request is large and rare beside the datagrams that make most outputs.
        indirect case store(StoreRequest, origin: CallSignaling.Origin)
        /// Send `bytes` from the local socket bound to `from` to `to`.
        case transmit([UInt8], from: Endpoint, to: Endpoint)
        /// Tell the user.
        case event(Event)
    }

    /// What the call reports.
    public enum Event: Sendable {
        /// The negotiator's state changed.
        case callState(CallState)
        /// The ICE connection state of a transport changed.
        case iceState(ConnectionState)
        /// A pair was selected: media flows on it. Indirect, as a store request is: large and rare.
        indirect case selectedPair(CandidatePair)
        /// A frame was received (in order, with its original timestamp).
        case frame(VideoFrame)
        /// The zone cannot be used (deleted, access lost): the call cannot go on.
        case zoneUnavailable(String)
        /// Every media stream this peer takes part in is done.
        case mediaFinished
        /// A TURN allocation was made or failed.
        case relay(String)
        /// The call hung up, by the user's wish or by itself (`ending` says how it went); it is
        /// closing.
        case ended(Ending)
        /// A record the remote peer wrote was dropped: its name and why (for a warning).
        case rejectedRecord(String)
        /// Media could not be sent on the path (consent expired, the transport closed): the
        /// first refusal since the last selected pair; the rest are counted in the report.
        case sendFailed(String)
        /// The remote peer hung up (its goodbye was read in the zone): who, and what showed it.
        case remoteHungUp(String)
    }

    public let configuration: PeerCallConfiguration
    /// Where the call is, and what it holds there.
    var state: PeerCallState = .idle
    public private(set) var signaling: CallSignaling
    public private(set) var milestones = CallMilestones()
    public private(set) var media: CallMedia
    /// DTLS-SRTP (or nothing) between the selected pair and the media.
    private var protection: MediaProtection
    /// Local candidates polled from a transport, signaled as one batch once it has no more outputs.
    private var gathered: (epoch: CallEpoch, candidates: [ICECandidate])?
    private var outputs = OutputQueue<Output>()
    private var seed: UInt64
    /// Set when the media budget ran out: more media output is due at once.
    private var mediaBacklog: Instant?
    /// What the summary tells: the last path, restarts, drops.
    public private(set) var report = PeerCallReport()
    /// When to feed `.timer` next: worked out at the end of every input, the only place the parts
    /// change.
    public private(set) var nextDeadline: Instant?
    /// Set for a leg of a room's group call: the room's negotiator of the pair speaks through it.
    var roomLeg: RoomLegLink?
    /// Our goodbye on the selected pair while its copies go out.
    private var goodbye: MediaGoodbye?
    /// The local socket the datagram being handled arrived on (a plain goodbye must come on the pair's).
    private var receivedOn: Endpoint?

    /// How long the media may take to finish after the remote's goodbye (the call page waits as long).
    static let remoteGoodbyeSettle: Duration = .seconds(3)

    /// The reason a call ends with when its remote peer cannot be reached any more.
    public static let remoteUnreachable = "remote unreachable"

    public init(configuration: PeerCallConfiguration, binding: RoomBinding) throws(SignalRecordError) {
        let media = CallMedia(configuration: configuration.media, seed: configuration.seed)
        signaling = try CallSignaling(
            configuration: Self.signalingConfiguration(configuration, media: media), binding: binding,
            myUserID: configuration.myUserID, remoteUserID: configuration.remoteUserID,
            epochClock: configuration.epochClock, seed: configuration.seed)
        self.configuration = configuration
        seed = configuration.seed
        self.media = media
        protection = MediaProtection(security: configuration.mediaSecurity,
                                     handshakeTimeout: configuration.dtlsHandshakeTimeout)
        updateDeadline()
    }

    /// The signaling configuration of the call: what the media adds to our descriptions.
    static func signalingConfiguration(_ configuration: PeerCallConfiguration,
                                               media: CallMedia) -> SignalingConfiguration {
        var signalingConfiguration = configuration.signaling
        signalingConfiguration.negotiator.mediaAttributes += media.sdpAttributes
        signalingConfiguration.negotiator.dtls = configuration.mediaSecurity.sdp
        // Our descriptions say what this peer does with video: sendonly, recvonly or both (a peer doing
        // neither, signaling only, keeps sendrecv).
        if configuration.media.send != nil || configuration.media.receive {
            signalingConfiguration.negotiator.direction = MediaDirection(
                sends: configuration.media.send != nil, receives: configuration.media.receive)
        }
        // DTLS-SRTP is what browsers speak: our descriptions then take their dialect too.
        if configuration.mediaSecurity.security == .dtlsSRTP {
            signalingConfiguration.negotiator.dialect = MediaSecurity.dtlsSRTP.dialect
        }
        // The browsers' dialect announces who our stream is (SSRCs, RTX, CNAME, msid) in every
        // description; CallMedia sends from what was announced.
        if signalingConfiguration.negotiator.dialect == .webRTC, signalingConfiguration.negotiator.source == nil {
            var random = SeededRandom(seed: configuration.seed ^ 0x5353_5243)
            signalingConfiguration.negotiator.source = .random(using: &random)
        }
        return signalingConfiguration
    }

    // MARK: - Where the call is

    /// Where the call is.
    public var phase: Phase {
        switch state {
        case .idle: .idle
        case .joining: .joining
        case .negotiating: .negotiating
        case .connected: .connected
        case .restarting: .restarting
        case .closing(let closing): .closing(closing.ending)
        case .closed(let ending): .closed(ending)
        }
    }

    /// How the call ended, once it has hung up.
    public var ending: Ending? { state.ending }

    /// Whether the call has hung up (it may still be closing).
    public var hasHungUp: Bool { state.ending != nil }

    /// Whether the call has hung up and drained every transport: nothing more will come out of it
    /// but what the store requests it asked for bring back.
    public var isClosed: Bool {
        switch state {
        case .closed: goodbye?.isDone ?? true
        default: false
        }
    }

    /// The current epoch's selected pair, while the call is up.
    public var selectedPair: CandidatePair? { state.current?.selectedPair }

    /// Everything the call's transports dropped, those it let go of included.
    public var transportDrops: ICETransport.Drops {
        var drops = report.drainedTransportDrops
        state.forEachTransport { drops = drops + $0.drops }
        return drops
    }

    /// Media packets the protection dropped before the path was secured (or after it failed), and
    /// datagrams that came before DTLS was set up.
    public var unprotectedDrops: Int { protection.drops.unsecuredSends + protection.drops.receivedBeforeSetup }

    // MARK: - The machine

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .start:
            guard state.isIdle else { return }  // a call starts once
            milestones.started = now
            state = .joining(connectBy: configuration.lifetime.connectTimeout.map { now + $0 })
            signal(.start, now: now)
        case .signaling(let event):
            signal(event, now: now)
        case .hangUp:
            end(.completed, now: now)
        case .leg(let action):
            roomLeg?.actions.append(action)
        case .legEnded(let ending):
            end(ending, now: now)
        case .sayGoodbye:
            sayGoodbye(now: now)
        case .timer:
            for d in goodbye?.due(now: now) ?? [] { outputs.append(.transmit(d.bytes, from: d.from, to: d.to)) }
            actOnDeadline(now: now)
            if roomLeg == nil, let wake = signaling.nextDeadline, wake <= now { signaling.handle(.timer, now: now) }
            // What signaling's timer asked for goes out before what the transports' timers send.
            route(now: now)
            state.forEachTransport { $0.timer(now: now) }
            protection.handle(.timer, now: now)
            media.handle(.timer, now: now)
        case .datagram(let bytes, let from, let to):
            receivedOn = to
            let taken = state.transport(for: bytes, from: from, to: to)?.receive(bytes, from: from, to: to, now: now)
            if taken != true { report.datagramsWithoutTransport += 1 }
        }
        route(now: now)
        receivedOn = nil
        state.dropDrained(now: now) { report.drainedTransportDrops = report.drainedTransportDrops + $0.drops }
        updateDeadline()
    }

    /// The next output, or nil until the next input.
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// Works out the earliest deadline of the call's own and its parts' (their deadlines are
    /// kept by each, worked out as their inputs end).
    private mutating func updateDeadline() {
        var next = Instant.earliest(roomLeg == nil ? signaling.nextDeadline : nil, state.transportDeadline)
        if media.isActive { next = .earliest(next, media.nextDeadline) }
        next = .earliest(next, mediaBacklog)
        next = .earliest(next, goodbye?.nextDeadline)
        if state.ending == nil { next = .earliest(next, .earliest(state.deadline, protection.nextDeadline)) }
        nextDeadline = next
    }

    // MARK: - The call's own decisions

    /// The connect, hold, media, goodbye and reconnect deadlines (`CallLifetime`).
    private mutating func actOnDeadline(now: Instant) {
        guard let due = state.due(now: now) else { return }
        let ending: Ending
        switch due {
        case .connect:
            ending = connectTimeout()
        case .remoteGoodbye(let why):
            ending = endingAfterRemoteHangUp(why)
        case .media:
            ending = mediaTimeout()
        case .hold:
            ending = .completed
        case .reconnect(let attempt):
            ending = .failed("\(Self.remoteUnreachable): no path within \(configuration.lifetime.reconnectTimeout) "
                             + "after ICE failed (\(attempt) restart(s) tried)")
        }
        end(ending, now: now)
    }

    private func connectTimeout() -> Ending {
        let relay = report.relayFailure.map { "; relay \($0)" } ?? ""
        let timeout = configuration.lifetime.connectTimeout ?? .zero
        return .failed("no connection within \(timeout) (call \(signaling.negotiator.state), ICE \(report.iceState))"
                       + relay)
    }

    private func mediaTimeout() -> Ending {
        let s = media.stats
        let limit = configuration.media.receiveFrames.map { " of \($0)" } ?? ""
        let timeout = configuration.lifetime.mediaTimeout ?? .zero
        return .failed("the media did not end within \(timeout) of connecting (\(s.framesReceived)\(limit) frames "
                       + "received, \(s.framesSent) sent)")
    }

    /// Hangs up once: stops media, says goodbye through the store (which closes ICE); every
    /// transport is drained from now on.
    private mutating func end(_ how: Ending, now: Instant) {
        guard state.ending == nil else { return }
        state.hangUp(how, now: now)
        milestones.ended = now
        outputs.append(.event(.ended(how)))
        media.handle(.stop, now: now)
        signal(.hangUp, now: now)
    }

    /// ICE failed on `epoch` — every pair failed, or consent on the selected pair expired (RFC
    /// 7675 §5.1). Before the first connection the connect timeout governs; after it, the
    /// negotiator restarts ICE in a new epoch (the offer creator starts it) and the call gives
    /// that `reconnectTimeout`, at most `reconnectAttempts` times, then ends. A remote that said
    /// goodbye is not reconnected to.
    private mutating func pathFailed(epoch: CallEpoch, now: Instant) {
        switch state.pathFailed(now: now, reconnectTimeout: configuration.lifetime.reconnectTimeout,
                                attempts: configuration.lifetime.reconnectAttempts) {
        case .notConnected:
            signal(.ice(.failed(epoch: epoch)), now: now)
        case .remoteGoodbye(let why):
            end(endingAfterRemoteHangUp(why), now: now)
        case .exhausted(let tried):
            end(.failed("\(Self.remoteUnreachable): ICE failed (\(tried) restart(s) tried)"), now: now)
        case .restarting(let attempt):
            report.restartsTried = attempt
            signal(.ice(.failed(epoch: epoch)), now: now)
        }
    }

    // MARK: - The route

    /// At most this many media outputs per input, so a sender pacing `max` shares the loop with
    /// incoming datagrams and RTCP (the rest is taken at the next step, due at once).
    static let mediaBudget = 128

    /// Drains every part, one output at a time, in a fixed order, until all are quiet: the
    /// transports first (what they report may change what signaling says), then signaling, the
    /// protection, and the media within its budget. Each output goes to one consumer, which feeds
    /// other parts; their outputs are taken by this loop, in order.
    private mutating func route(now: Instant) {
        var budget = Self.mediaBudget
        mediaBacklog = nil
        while true {
            if let (output, transport) = state.pollTransports() {
                transportOutput(output, from: transport, now: now)
                continue
            }
            if gathered != nil {
                signalGathered(now: now)
                continue
            }
            if let action = nextSignalingAction() {
                signalingAction(action, now: now)
                continue
            }
            if let output = protection.pollOutput() {
                protectionOutput(output, now: now)
                continue
            }
            if budget > 0, let output = media.pollOutput() {
                budget -= 1
                if budget == 0 { mediaBacklog = now }
                mediaOutput(output, now: now)
                continue
            }
            return
        }
    }

    // MARK: Signaling's actions

    /// Tells the call's signaling; a leg tells the room only what its ICE reports (the room starts,
    /// times and ends the leg's negotiator itself).
    private mutating func signal(_ event: CallSignaling.Event, now: Instant) {
        guard roomLeg != nil else {
            signaling.handle(event, now: now)
            return
        }
        if case .ice(let ice) = event { roomLeg?.events.append(ice) }
    }

    /// The signaling's next action: the call's own, or, for a leg, what the room sent in.
    private mutating func nextSignalingAction() -> CallSignaling.Action? {
        roomLeg == nil ? signaling.pollOutput() : roomLeg?.actions.pop()
    }

    private mutating func signalingAction(_ action: consuming CallSignaling.Action, now: Instant) {
        switch action {
        case .store(let request, let origin):
            outputs.append(.store(request, origin: origin))
        case .ice(let command):
            perform(command, now: now)
        case .report(let callState):
            if milestones.signalingComplete == nil {
                switch callState {
                case .connecting, .connected: milestones.signalingComplete = now
                default: break
                }
            }
            outputs.append(.event(.callState(callState)))
        case .zoneUnavailable(let path, let error):
            outputs.append(.event(.zoneUnavailable("\(path): \(error)")))
            end(.failed("the room's zone is unavailable: \(path): \(error)"), now: now)
        case .rejected(let problem):
            outputs.append(.event(.rejectedRecord(problem.description)))
        case .remoteHungUp(let epoch, let type):
            let why = "\(configuration.remoteUserID) hung up (its \(type.rawValue) of epoch \(epoch) was deleted "
                + "from the zone)"
            outputs.append(.event(.remoteHungUp(why)))
            remoteHungUp(why, now: now)
        }
    }

    /// The remote's goodbye: a call whose media is done (or that has none) ends as planned; one
    /// whose media flows lets what already arrived finish (the receiver's jitter buffer and its
    /// wait after the sender's BYE) until `remoteGoodbyeSettle`; one not connected ends now.
    private mutating func remoteHungUp(_ why: String, now: Instant) {
        guard state.ending == nil else { return }
        if !media.isActive || milestones.mediaFinished != nil {
            end(.completed, now: now)
            return
        }
        if state.isConnected {
            _ = state.settle(goodbye: PeerCallState.RemoteGoodbye(why: why, settleBy: now + Self.remoteGoodbyeSettle))
        } else {
            end(endingAfterRemoteHangUp(why), now: now)
        }
    }

    /// How the call ends when the remote hung up and our media did not finish in the time given:
    /// as planned when everything we send went out (a receiver hangs up once it has it all; its BYE
    /// may be what we were still waiting for); otherwise the media was cut short.
    private func endingAfterRemoteHangUp(_ why: String) -> Ending {
        guard media.isActive, milestones.mediaFinished == nil else { return .completed }
        let s = media.stats
        let toSend = configuration.media.send?.frames.count ?? 0
        if !configuration.media.receive, s.framesSent >= toSend { return .completed }
        var got: [String] = []
        if configuration.media.receive {
            got.append("\(s.framesReceived)\(configuration.media.receiveFrames.map { " of \($0)" } ?? "") frames received")
        }
        if configuration.media.send != nil { got.append("\(s.framesSent) of \(toSend) frames sent") }
        return .failed("\(why) before the media ended (\(got.joined(separator: ", ")))")
    }

    /// Carries out an ICE command; what the transports report is routed after it.
    private mutating func perform(_ command: ICECommand, now: Instant) {
        switch command {
        case .restartICE(let epoch, let credentials):
            // A leg allocates from the relay socket its room lent this epoch; a call of two from its own.
            let relaySocket = roomLeg == nil ? configuration.transport.relaySocket : roomLeg?.takeRelaySocket()
            let fresh = EpochTransport(epoch: epoch, credentials: credentials, relaySocket: relaySocket)
            report.unsentDatagrams += state.replaceCurrent(with: fresh, now: now)
        case .setLocalDescription(let epoch, let description):
            guard let current = state.current, current.epoch == epoch else { return }
            media.handle(.localDescription(description), now: now)
            seed &+= 1
            let role: Role = description.type == .offer ? .controlling : .controlled
            do throws(ICEError) {
                try current.start(role: role, configuration: configuration.transport, seed: seed, now: now)
            } catch {
                signal(.ice(.failed(epoch: epoch)), now: now)
            }
        case .applyRemoteDescription(let epoch, let description):
            guard let current = state.current, current.epoch == epoch else { return }
            media.handle(.remoteDescription(description), now: now)
            if let problem = media.problem { end(.failed(problem), now: now) }
            protection.handle(.remoteDescription(description), now: now)
            // The video section's transport: a browser's offer may put audio first (RFC 8843 §7.3.3:
            // with the first bundled section rejected, the accepted video section carries the bundle).
            let section = description.media.first { $0.kind == .video && !$0.isRejected } ?? description.media.first
            let credentials = section.flatMap { description.iceCredentials(for: $0) }
            let candidates = section?.candidates.compactMap(\.iceCandidate) ?? []
            let previous = current.remoteCredentials
            do throws(ICEError) {
                try current.setRemote(credentials: credentials, candidates: candidates,
                                      ended: section?.hasEndOfCandidates ?? false)
            } catch {
                signal(.ice(.failed(epoch: epoch)), now: now)
                return
            }
            // The same credentials again on a connected epoch: a renegotiation without an ICE
            // restart, which leaves the ICE connection up (RFC 8839 §4.4.1.1.1). The negotiator
            // went back to connecting when it applied the description; tell it the connection
            // stands (the `legacy` configuration re-applies old offers like this).
            if previous != nil, previous == credentials, current.selectedPair != nil,
               current.state == .connected || current.state == .completed {
                signal(.ice(.connected(epoch: epoch)), now: now)
            }
        case .addRemoteCandidates(let epoch, let candidates, let ended):
            guard let current = state.current, current.epoch == epoch else { return }
            current.add(candidates.compactMap(\.iceCandidate), ended: ended)
        case .close:
            state.forEachTransport { $0.close(now: now) }
        }
    }

    // MARK: The transports' outputs

    private mutating func transportOutput(_ output: consuming ICETransport.Output, from transport: EpochTransport,
                                          now: Instant) {
        let epoch = transport.epoch
        switch output {
        case .transmit(let bytes, let from, let to):
            outputs.append(.transmit(bytes, from: from, to: to))
        case .event(.localCandidate(let candidate)):
            if let batch = gathered, batch.epoch != epoch { signalGathered(now: now) }
            if gathered == nil { gathered = (epoch, []) }
            gathered?.candidates.append(ICECandidate(candidate,
                                                     usernameFragment: transport.credentials.usernameFragment))
        case .event(.gatheringComplete):
            if let batch = gathered, batch.epoch == epoch, !batch.candidates.isEmpty {
                // Gathering ended in the same step as its last candidates (host candidates, no
                // STUN or TURN server): one chunk carries them and the end, a store hop fewer.
                gathered = nil
                signal(.ice(.localCandidates(epoch: epoch, batch.candidates, endOfCandidates: true)), now: now)
            } else {
                signalGathered(now: now)
                signal(.ice(.gatheringComplete(epoch: epoch)), now: now)
            }
        case .event(.stateChanged(let connection)):
            report.iceState = connection
            outputs.append(.event(.iceState(connection)))
            if connection == .failed { pathFailed(epoch: epoch, now: now) }
        case .event(.selectedPair(let pair)):
            pairSelected(pair, on: transport, now: now)
        case .event(.data(let bytes, let from)):
            if isPlainGoodbye(bytes, from: from, on: transport) {
                remoteSaidGoodbye()
            } else {
                protection.handle(.received(bytes), now: now)
            }
        case .event(.relayAllocated(let relayed, let server)):
            outputs.append(.event(.relay(Self.allocationText(relayed, on: server))))
        case .event(.relayFailed(let server, let code, let reason)):
            let failure = "TURN server \(server): \(code) \(reason)"
            report.relayFailure = failure
            outputs.append(.event(.relay("failed: \(failure)")))
        }
    }

    /// "allocated RELAYED on SERVER", for the log, with the endpoints written as bytes.
    private static func allocationText(_ relayed: Endpoint, on server: Endpoint) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(64)
        text.append(contentsOf: "allocated ".utf8)
        relayed.appendDescription(to: &text)
        text.append(contentsOf: " on ".utf8)
        server.appendDescription(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Signals the local candidates gathered so far as one batch (one SignalIceChunk).
    private mutating func signalGathered(now: Instant) {
        guard let batch = gathered else { return }
        gathered = nil
        guard !batch.candidates.isEmpty else { return }
        signal(.ice(.localCandidates(epoch: batch.epoch, batch.candidates)), now: now)
    }

    private mutating func pairSelected(_ pair: CandidatePair, on transport: EpochTransport, now: Instant) {
        report.lastSelectedPair = pair
        let lifetime = configuration.lifetime
        state.pairSelected(holdUntil: lifetime.holdAfterConnect.map { now + $0 },
                           mediaDueBy: milestones.mediaFinished == nil ? lifetime.mediaTimeout.map { now + $0 } : nil)
        milestones.iceConnected = milestones.iceConnected ?? now
        outputs.append(.event(.selectedPair(pair)))
        signal(.ice(.connected(epoch: transport.epoch)), now: now)
        for bytes in transport.takeHeld() { sendOnSelectedPair(bytes, now: now) }
        protection.handle(.pairSelected, now: now)
    }

    // MARK: The protection's outputs

    private mutating func protectionOutput(_ output: MediaProtection.Output, now: Instant) {
        switch output {
        case .transmit(let bytes):
            sendOnSelectedPair(bytes, now: now)
        case .media(let bytes):
            media.handle(.packet(bytes), now: now)
        case .secured:
            milestones.mediaSecured = milestones.mediaSecured ?? now
            media.handle(.connected, now: now)
        case .failed(let reason):
            end(.failed(reason), now: now)
        case .goodbye(let bytes):
            sendGoodbye(bytes, now: now)
        case .remoteClosed:
            remoteSaidGoodbye()
        }
    }

    // MARK: The goodbye on the path

    /// Our goodbye (`MediaGoodbye`): a leg of a room we leave tells its remote on the selected pair.
    private mutating func sayGoodbye(now: Instant) {
        guard roomLeg != nil, goodbye == nil, let current = state.current, current.selectedPair != nil else { return }
        goodbye = MediaGoodbye()
        let source = media.localSource ?? UInt32(truncatingIfNeeded: configuration.seed ^ 0x4259_4521)
        let plain = MediaGoodbye.plainPacket(source: source, fragment: current.credentials.usernameFragment)
        protection.handle(.sayGoodbye(plainGoodbye: plain), now: now)
    }

    /// Sends a datagram of our goodbye on the selected pair, keeping what the transport sent of it for
    /// the copies to come.
    private mutating func sendGoodbye(_ bytes: [UInt8], now: Instant) {
        guard let current = state.current, current.selectedPair != nil else { return }
        do throws(ICEError) {
            try current.send(bytes)
        } catch {
            report.unsentDatagrams += 1
            return
        }
        var sent: [(bytes: [UInt8], from: Endpoint, to: Endpoint)] = []
        while let output = current.pollOutput() {
            if case .transmit(let bytes, let from, let to) = output { sent.append((bytes, from, to)) }
            transportOutput(output, from: current, now: now)
        }
        goodbye?.firstCopy(sent, now: now)
    }

    /// Whether `bytes`, data from `from` on `transport`, is the remote's plain goodbye on a leg of a
    /// room: on the current epoch's selected pair (both its ends), naming the remote's username fragment of
    /// that epoch and its source when known. One that names them but came another way is refused (counted).
    private mutating func isPlainGoodbye(_ bytes: [UInt8], from: Endpoint, on transport: EpochTransport) -> Bool {
        guard roomLeg != nil, configuration.mediaSecurity.security == .none,
              let fragment = transport.remoteCredentials?.usernameFragment,
              MediaGoodbye.isPlainGoodbye(bytes, remoteFragment: fragment, remoteSource: media.remoteSource)
        else { return false }
        let onPair = state.current === transport && transport.selectedPair.map { pair in
            pair.sendTo == from && (pair.local.kind == .relay || receivedOn == pair.sendFrom)
        } == true
        if !onPair { report.refusedGoodbyes += 1 }
        return onPair
    }

    /// The remote said goodbye on the path: a leg tells the room, which ends it. (A call of two ends
    /// by its signaling: the remote's goodbye records.)
    private mutating func remoteSaidGoodbye() {
        guard roomLeg != nil, state.ending == nil else { return }
        roomLeg?.remoteSaidGoodbye = true
    }

    /// Sends on the current transport's selected pair; before one is selected, holds a few.
    private mutating func sendOnSelectedPair(_ bytes: [UInt8], now: Instant) {
        guard let current = state.current, current.hasStarted else {
            report.unsentDatagrams += 1
            return
        }
        guard current.selectedPair != nil else {
            if !current.hold(bytes) { report.unsentDatagrams += 1 }
            return
        }
        do throws(ICEError) {
            try current.send(bytes)
        } catch {
            report.unsentDatagrams += 1
            if state.firstSendFailure() { outputs.append(.event(.sendFailed(error.description))) }
        }
    }

    // MARK: The media's outputs

    private mutating func mediaOutput(_ output: CallMedia.Output, now: Instant) {
        switch output {
        case .packet(let bytes):
            protection.handle(.send(bytes), now: now)
        case .frame(let frame):
            milestones.firstFrame = milestones.firstFrame ?? now
            outputs.append(.event(.frame(frame)))
        case .finished:
            milestones.mediaFinished = milestones.mediaFinished ?? now
            state.mediaDone()
            outputs.append(.event(.mediaFinished))
            if configuration.lifetime.endAfterMedia || state.isSettlingGoodbye { end(.completed, now: now) }
        }
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension PeerCall: SansIOMachine {}
