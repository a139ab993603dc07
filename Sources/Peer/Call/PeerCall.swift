// A call, sans-I/O: the signaling machine (records in the store), the ICE transport of the
// current epoch, the media protection (DTLS-SRTP or plain) on the selected pair, and the media
// that flows on it (docs/ARCHITECTURE.md "A call, end to end"). The runner performs the store requests
// and moves datagrams and time; every decision is made here, so the simulator and the tests run
// exactly this.
//
// Where the call is lives in one value, `state` (`PeerCallState`). What its parts produce passes
// through one place, `route`, which drains them in a fixed order — the transports, signaling,
// the protection, the media — and hands each output to its consumer, which only feeds other
// parts; nothing is polled anywhere else, so nothing polled is dropped (the shape of str0m's
// `do_poll_output`). A decision to end the call is taken where it is found: the goodbye it
// causes is routed after whatever was already queued.

import ICE
import Media
import RecordStore
import Signaling
import ZoneCore

/// One peer's side of a call.
public struct PeerCall {
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
    }

    /// Something the call wants done or reported.
    public enum Output: Sendable {
        /// Carry out a store request and feed back `.signaling(.reply(origin, outcome))`. Boxed: a
        /// request is a few hundred bytes, and every output is copied through the call's queue.
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
        /// The ICE connection state of the current epoch changed.
        case iceState(ConnectionState)
        /// A pair was selected: media flows on it. Boxed: a pair is some 200 bytes, and every output
        /// (a datagram to transmit, most of them) was as large, copied into the queue and out of it.
        indirect case selectedPair(CandidatePair)
        /// A frame was received (in order, with its original timestamp).
        case frame(VideoFrame)
        /// The zone cannot be used (deleted, access lost): the call cannot go on.
        case zoneUnavailable(String)
        /// Every media stream this peer takes part in is done.
        case mediaFinished
        /// A TURN allocation was made or failed.
        case relay(String)
        /// The call hung up, by the user's wish or by itself (`ending` says how it went).
        case ended(Ending)
        /// A record the remote peer wrote was dropped: its name and why (for a warning).
        case rejectedRecord(String)
        /// Media could not be sent on the path (consent expired, the transport closed): the
        /// first refusal since the last selected pair; the rest are counted in `unsentDatagrams`.
        case sendFailed(String)
        /// The remote peer hung up (its goodbye was read in the zone): who, and what showed it.
        case remoteHungUp(String)
    }

    public let configuration: PeerCallConfiguration
    /// Where the call is.
    public private(set) var state: PeerCallState = .idle
    public private(set) var signaling: CallSignaling
    public private(set) var milestones = CallMilestones()
    /// The transport of the newest epoch.
    private var current: EpochTransport?
    /// The transport an ICE restart replaced: closed, routed until its last outputs are out.
    /// Boxed: a call is set up and handed around as a value, and an inline `EpochTransport?` (~2 KB,
    /// nil but for the moments after an ICE restart) made every copy of it that much longer.
    /// Mutated only when the box is not shared (`route`), so a copied call still behaves as a value.
    private var retired: RetiredEpoch?
    /// The last pair selected, kept for summaries after the path failed or the call ended
    /// (whether media may flow on it is `state`'s to say).
    public private(set) var selectedPair: CandidatePair?
    /// The last ICE connection state a transport reported.
    public private(set) var iceState: ConnectionState = .new
    public private(set) var media: CallMedia
    /// DTLS-SRTP (or nothing) between the selected pair and the media.
    private var protection: MediaProtection
    /// Datagrams of the protection made before our side selected a pair (the remote's DTLS
    /// ClientHello can arrive first): sent once one is, instead of waiting for a retransmission.
    private var heldForPair: [[UInt8]] = []
    static let heldForPairLimit = 16
    /// Local candidates polled from a transport, signaled as one batch once it has no more outputs.
    private var gathered: (epoch: CallEpoch, candidates: [ICECandidate])?
    private var outputs = OutputQueue<Output>()
    private var seed: UInt64
    /// Set when the media budget ran out: more media output is due at once.
    private var mediaBacklog: Instant?
    /// Whether a refused send was reported since the last selected pair (`Event.sendFailed`).
    private var sendFailureReported = false
    /// Why the last TURN allocation failed, if one did.
    public private(set) var relayFailure: String?
    /// ICE restarts tried since the call first connected.
    public private(set) var reconnectAttempts = 0
    /// Datagrams for the pair that could not be sent: no transport, no pair and the hold full,
    /// or the transport refused them.
    public private(set) var unsentDatagrams = 0
    /// Datagrams that arrived before the call had a transport to take them.
    public private(set) var datagramsWithoutTransport = 0
    /// When the call fails unless its media is done (`CallLifetime.mediaTimeout`, from the first
    /// pair selected); nil before that, without a timeout, and once the media is done.
    private var mediaDueBy: Instant?
    /// The remote hung up while our media was still going: why, and until when the media may
    /// finish what already arrived (the receiver's jitter buffer and its wait after the sender's
    /// BYE) before the call ends anyway.
    private var remoteGoodbye: (why: String, settleBy: Instant)?
    /// How long the media may take to finish after the remote's goodbye (the call page waits as long).
    static let remoteGoodbyeSettle: Duration = .seconds(3)

    /// The reason a call ends with when its remote peer cannot be reached any more.
    public static let remoteUnreachable = "remote unreachable"

    public init(configuration: PeerCallConfiguration, binding: RoomBinding) throws(SignalRecordError) {
        // What can throw is built first; the call is put together by an initializer that cannot throw.
        // A throwing initializer of a value this large copied the finished call three times on return
        // (and retained and released all of it once), about 29 KB per call made.
        let media = CallMedia(configuration: configuration.media, seed: configuration.seed)
        let signaling = try CallSignaling(
            configuration: Self.signalingConfiguration(configuration, media: media), binding: binding,
            myUserID: configuration.myUserID, remoteUserID: configuration.remoteUserID,
            epochClock: configuration.epochClock, seed: configuration.seed)
        self.init(configuration: configuration, media: media, signaling: signaling)
    }

    private init(configuration: PeerCallConfiguration, media: consuming CallMedia, signaling: consuming CallSignaling) {
        self.configuration = configuration
        seed = configuration.seed
        self.media = media
        self.signaling = signaling
        protection = MediaProtection(security: configuration.mediaSecurity)
        nextDeadline = earliestDeadline()
    }

    /// The signaling configuration of the call: what the media adds to our descriptions.
    private static func signalingConfiguration(_ configuration: PeerCallConfiguration,
                                               media: borrowing CallMedia) -> SignalingConfiguration {
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

    /// How the call ended, once it has hung up.
    public var ending: Ending? { state.ending }

    /// Whether the call has hung up (its goodbye may still be in the store requests it asked for).
    public var hasHungUp: Bool { state.ending != nil }

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        switch input {
        case .start:
            guard case .idle = state else { return }  // a call starts once
            milestones.started = now
            state = .joining(connectBy: configuration.lifetime.connectTimeout.map { now + $0 })
            signaling.handle(.start, now: now)
        case .signaling(let event):
            signaling.handle(event, now: now)
        case .hangUp:
            end(.completed, now: now)
        case .timer:
            actOnDeadline(now: now)
            if let wake = signaling.nextDeadline, wake <= now { signaling.handle(.timer, now: now) }
            // What signaling's timer asked for goes out before what the transport's timer sends.
            route(now: now)
            if let deadline = current?.transport?.nextDeadline, deadline <= now {
                current?.transport?.handle(.timer, now: now)
            }
            protection.handle(.timer, now: now)
            media.handle(.timer, now: now)
        case .datagram(let bytes, let from, let to):
            if current?.transport == nil {
                datagramsWithoutTransport += 1
            } else {
                current?.transport?.handle(.datagram(bytes, from: from, to: to), now: now)
            }
        }
        route(now: now)
        if case .hangingUp(let ending) = state, current?.transport?.nextDeadline == nil {
            state = .ended(ending)
        }
        nextDeadline = earliestDeadline()
    }

    /// The next output, or nil until the next input.
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// When to feed `.timer` next. Worked out once at the end of every input, the only place the
    /// parts change, and kept: a call is several kilobytes, and a computed property read where the
    /// call lies in a class (as a driver keeps it) is read from a copy of the whole call.
    public private(set) var nextDeadline: Instant?

    /// The earliest deadline of the call's own and its parts'. Mutating only so that it reads the
    /// call in place: a non-mutating method called from a mutating one is handed a copy of `self`.
    private mutating func earliestDeadline() -> Instant? {
        let own = hasHungUp ? nil
            : Instant.earliest(.earliest(.earliest(state.deadline, Self.deadline(of: &protection)), mediaDueBy),
                               remoteGoodbye?.settleBy)
        return .earliest(.earliest(.earliest(Self.deadline(of: &signaling), current?.transport?.nextDeadline),
                                   .earliest(Self.deadline(of: &media), mediaBacklog)), own)
    }

    // The parts' deadlines, read through `inout`: a getter called on a part where it lies in the
    // call was handed a copy of the part's fields it reads (five copies per input).
    private static func deadline(of part: inout CallSignaling) -> Instant? { part.nextDeadline }
    // A call without media has no deadline there: asking copied the (absent) sender and receiver.
    private static func deadline(of part: inout CallMedia) -> Instant? { part.isActive ? part.nextDeadline : nil }
    private static func deadline(of part: inout MediaProtection) -> Instant? { part.nextDeadline }

    // MARK: - The call's own decisions

    /// The connect, hold and reconnect deadlines (`CallLifetime`).
    private mutating func actOnDeadline(now: Instant) {
        if let goodbye = remoteGoodbye, goodbye.settleBy <= now, !hasHungUp {
            end(endingAfterRemoteHangUp(goodbye.why), now: now)
            return
        }
        if let due = mediaDueBy, due <= now, !hasHungUp {
            mediaDueBy = nil
            let s = media.stats
            let limit = configuration.media.receiveFrames.map { " of \($0)" } ?? ""
            let timeout = configuration.lifetime.mediaTimeout ?? .zero
            end(.failed("the media did not end within \(timeout) of connecting (\(s.framesReceived)\(limit) frames "
                        + "received, \(s.framesSent) sent)"), now: now)
            return
        }
        switch state {
        case .joining(let connectBy?), .negotiating(_, let connectBy?):
            guard connectBy <= now else { return }
            let relay = relayFailure.map { "; relay \($0)" } ?? ""
            let timeout = configuration.lifetime.connectTimeout ?? .zero
            end(.failed("no connection within \(timeout) (call \(signaling.negotiator.state), ICE \(iceState))"
                        + relay), now: now)
        case .connected(_, _, let holdUntil?) where holdUntil <= now:
            end(.completed, now: now)
        case .restarting(_, let reconnectBy, let holdUntil):
            if let holdUntil, holdUntil <= now {
                end(.completed, now: now)
            } else if reconnectBy <= now {
                end(.failed("\(Self.remoteUnreachable): no path within \(configuration.lifetime.reconnectTimeout) "
                            + "after ICE failed (\(reconnectAttempts) restart(s) tried)"), now: now)
            }
        case .idle, .joining, .negotiating, .connected, .hangingUp, .ended:
            break
        }
    }

    /// Hangs up once: stops media, says goodbye through the store (which closes ICE).
    private mutating func end(_ how: Ending, now: Instant) {
        guard !hasHungUp else { return }
        state = .hangingUp(how)
        milestones.ended = now
        outputs.append(.event(.ended(how)))
        media.handle(.stop, now: now)
        signaling.handle(.hangUp, now: now)
    }

    /// ICE failed on `epoch` — every pair failed, or consent on the selected pair expired (RFC
    /// 7675 §5.1). Before the first connection the connect timeout governs; after it, the
    /// negotiator restarts ICE in a new epoch (the offer creator starts it) and the call gives
    /// that `reconnectTimeout`, at most `reconnectAttempts` times, then ends.
    private mutating func pathFailed(epoch: CallEpoch, now: Instant) {
        let holdUntil: Instant?
        let reconnectBy: Instant
        switch state {
        case .idle, .joining, .negotiating, .hangingUp, .ended:
            signaling.handle(.ice(.failed(epoch: epoch)), now: now)
            return
        case .connected(_, _, let hold):
            holdUntil = hold
            reconnectBy = now + configuration.lifetime.reconnectTimeout
        case .restarting(_, let by, let hold):
            holdUntil = hold
            reconnectBy = by
        }
        guard reconnectAttempts < configuration.lifetime.reconnectAttempts else {
            end(.failed("\(Self.remoteUnreachable): ICE failed (\(reconnectAttempts) restart(s) tried)"), now: now)
            return
        }
        reconnectAttempts += 1
        state = .restarting(attempt: reconnectAttempts, reconnectBy: reconnectBy, holdUntil: holdUntil)
        signaling.handle(.ice(.failed(epoch: epoch)), now: now)
    }

    // MARK: - The route

    /// At most this many media outputs per input, so a sender pacing `max` shares the loop with
    /// incoming datagrams and RTCP (the rest is taken at the next step, due at once).
    static let mediaBudget = 128

    /// Drains every part, one output at a time, in a fixed order, until all are quiet: the
    /// retired and current transports first (what they report may change what signaling says),
    /// then signaling, the protection, and the media within its budget. Each output goes to one
    /// consumer, which feeds other parts; their outputs are taken by this loop, in order.
    private mutating func route(now: Instant) {
        var budget = Self.mediaBudget
        mediaBacklog = nil
        while true {
            if retired != nil {
                if !isKnownUniquelyReferenced(&retired) { retired = RetiredEpoch(retired!.transport) }
                if let output = retired!.transport.transport?.pollOutput() {
                    transportOutput(output, epoch: retired!.transport.epoch, now: now)
                    continue
                }
                retired = nil
            }
            if let output = current?.transport?.pollOutput(), let epoch = current?.epoch {
                transportOutput(output, epoch: epoch, now: now)
                continue
            }
            if gathered != nil {
                signalGathered(now: now)
                continue
            }
            if let action = signaling.pollOutput() {
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

    /// Takes the action (`consuming`): destroyed by `route` after the call, a polled output went through
    /// the runtime's generic Optional destroy (about 280 instructions an output).
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
            guard !hasHungUp, remoteGoodbye == nil else { return }
            if !media.isActive || milestones.mediaFinished != nil {
                end(.completed, now: now)
            } else {
                // What already arrived may still be on its way out of the receiver: let it finish.
                remoteGoodbye = (why, now + Self.remoteGoodbyeSettle)
            }
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

    /// Carries out an ICE command; what the transport reports is routed after it.
    private mutating func perform(_ command: ICECommand, now: Instant) {
        switch command {
        case .restartICE(let epoch, let credentials):
            current?.transport?.close()
            retired = current.map(RetiredEpoch.init)
            current = EpochTransport(epoch: epoch, credentials: credentials)
            switch state {
            case .joining(let connectBy), .negotiating(_, let connectBy):
                state = .negotiating(epoch: epoch, connectBy: connectBy)
            case .idle, .connected, .restarting, .hangingUp, .ended:
                break  // connected: the pair stands until the new epoch selects one
            }
        case .setLocalDescription(let epoch, let description):
            guard current?.epoch == epoch else { return }
            media.handle(.localDescription(description), now: now)
            seed &+= 1
            let role: Role = description.type == .offer ? .controlling : .controlled
            let transport = configuration.transport, seed = seed
            do throws(ICEError) {
                try current?.start(role: role, configuration: transport, seed: seed, now: now)
            } catch {
                signaling.handle(.ice(.failed(epoch: epoch)), now: now)
            }
        case .applyRemoteDescription(let epoch, let description):
            guard current?.epoch == epoch else { return }
            media.handle(.remoteDescription(description), now: now)
            if let problem = media.problem { end(.failed(problem), now: now) }
            protection.handle(.remoteDescription(description), now: now)
            // The video section's transport: a browser's offer may put audio first (RFC 8843 §7.3.3:
            // with the first bundled section rejected, the accepted video section carries the bundle).
            let section = description.media.first { $0.kind == .video && !$0.isRejected } ?? description.media.first
            let credentials = section.flatMap { description.iceCredentials(for: $0) }
            let candidates = section?.candidates.compactMap(\.iceCandidate) ?? []
            let previous = current?.remoteCredentials
            do throws(ICEError) {
                try current?.setRemote(credentials: credentials, candidates: candidates,
                                       ended: section?.hasEndOfCandidates ?? false)
            } catch {
                signaling.handle(.ice(.failed(epoch: epoch)), now: now)
                return
            }
            // The same credentials again on a connected epoch: a renegotiation without an ICE
            // restart, which leaves the ICE connection up (RFC 8839 §4.4.1.1.1). The negotiator
            // went back to connecting when it applied the description; tell it the connection
            // stands (the `legacy` configuration re-applies old offers like this).
            if previous != nil, previous == credentials, current?.transport?.selectedPair != nil,
               iceState == .connected || iceState == .completed {
                signaling.handle(.ice(.connected(epoch: epoch)), now: now)
            }
        case .addRemoteCandidates(let epoch, let candidates, let ended):
            guard current?.epoch == epoch else { return }
            current?.add(candidates.compactMap(\.iceCandidate), ended: ended)
        case .close:
            current?.transport?.close()
        }
    }

    // MARK: The transports' outputs

    /// Takes the output (`consuming`), as `signalingAction` does.
    private mutating func transportOutput(_ output: consuming ICETransport.Output, epoch: CallEpoch, now: Instant) {
        switch output {
        case .transmit(let bytes, let from, let to):
            outputs.append(.transmit(bytes, from: from, to: to))
        case .event(.localCandidate(let candidate)):
            if let batch = gathered, batch.epoch != epoch { signalGathered(now: now) }
            let ufrag = epoch == current?.epoch ? current?.credentials.usernameFragment
                : retired?.transport.credentials.usernameFragment
            if gathered == nil { gathered = (epoch, []) }
            gathered?.candidates.append(ICECandidate(candidate, usernameFragment: ufrag))
        case .event(.gatheringComplete):
            signalGathered(now: now)
            signaling.handle(.ice(.gatheringComplete(epoch: epoch)), now: now)
        case .event(.stateChanged(let connection)):
            iceState = connection
            outputs.append(.event(.iceState(connection)))
            if connection == .failed { pathFailed(epoch: epoch, now: now) }
        case .event(.selectedPair(let pair)):
            pairSelected(pair, epoch: epoch, now: now)
        case .event(.data(let bytes, _)):
            protection.handle(.received(bytes), now: now)
        case .event(.relayAllocated(let relayed, let server)):
            outputs.append(.event(.relay(Self.allocationText(relayed, on: server))))
        case .event(.relayFailed(let server, let code, let reason)):
            let failure = "TURN server \(server): \(code) \(reason)"
            relayFailure = failure
            outputs.append(.event(.relay("failed: \(failure)")))
        }
    }

    /// "allocated RELAYED on SERVER", for the log: the endpoints written as bytes into one buffer,
    /// since interpolating them cost several thousand instructions in every call that relays.
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
        signaling.handle(.ice(.localCandidates(epoch: batch.epoch, batch.candidates)), now: now)
    }

    private mutating func pairSelected(_ pair: CandidatePair, epoch: CallEpoch, now: Instant) {
        selectedPair = pair
        sendFailureReported = false
        switch state {
        case .joining, .negotiating:
            state = .connected(epoch: epoch, pair: pair,
                               holdUntil: configuration.lifetime.holdAfterConnect.map { now + $0 })
            if milestones.mediaFinished == nil { mediaDueBy = configuration.lifetime.mediaTimeout.map { now + $0 } }
        case .connected(_, _, let holdUntil), .restarting(_, _, let holdUntil):
            state = .connected(epoch: epoch, pair: pair, holdUntil: holdUntil)
        case .idle, .hangingUp, .ended:
            break
        }
        milestones.iceConnected = milestones.iceConnected ?? now
        outputs.append(.event(.selectedPair(pair)))
        signaling.handle(.ice(.connected(epoch: epoch)), now: now)
        let held = heldForPair
        heldForPair.removeAll()
        for bytes in held { sendOnSelectedPair(bytes, now: now) }
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
        }
    }

    /// Sends on the current transport's selected pair; before one is selected, holds a few.
    private mutating func sendOnSelectedPair(_ bytes: [UInt8], now: Instant) {
        guard current?.transport != nil else {
            unsentDatagrams += 1
            return
        }
        guard current?.transport?.selectedPair != nil else {
            if heldForPair.count < Self.heldForPairLimit { heldForPair.append(bytes) } else { unsentDatagrams += 1 }
            return
        }
        do throws(ICEError) {
            try current?.transport?.send(bytes)
        } catch {
            unsentDatagrams += 1
            guard !sendFailureReported else { return }
            sendFailureReported = true
            outputs.append(.event(.sendFailed(error.description)))
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
            mediaDueBy = nil
            outputs.append(.event(.mediaFinished))
            if configuration.lifetime.endAfterMedia || remoteGoodbye != nil { end(.completed, now: now) }
        }
    }
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension PeerCall: SansIOMachine {}

/// The transport an ICE restart replaced, in a box of its own (`PeerCall.retired`).
private final class RetiredEpoch {
    var transport: EpochTransport

    init(_ transport: EpochTransport) {
        self.transport = transport
    }
}
