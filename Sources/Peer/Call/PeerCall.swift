// A call, sans-I/O: the signaling machine (records in the store), the ICE transport of the
// current epoch, and the media that flows once a pair is selected (ARCHITECTURE "a call, end
// to end"). The runner performs the store requests and moves datagrams and time; every
// decision is made here, so the simulator and the tests run exactly this.

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
        /// Carry out a store request and feed back `.signaling(.reply(origin, outcome))`.
        case store(StoreRequest, origin: CallSignaling.Origin)
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
        /// A pair was selected: media flows on it.
        case selectedPair(CandidatePair)
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
    }

    /// How a call ended.
    public enum Ending: Sendable, Equatable {
        /// Hung up as planned: by the user, after its media, or after its hold time.
        case completed
        /// Hung up because it could not go on; the reason is for the user.
        case failed(String)
    }

    public let configuration: PeerCallConfiguration
    public private(set) var signaling: CallSignaling
    public private(set) var milestones = CallMilestones()
    /// The transport of the newest epoch.
    private var current: EpochTransport?
    /// The pair media flows on, across epochs until a newer one is selected.
    public private(set) var selectedPair: CandidatePair?
    public private(set) var iceState: ConnectionState = .new
    public private(set) var media: CallMedia
    /// DTLS-SRTP (or nothing) between the selected pair and the media.
    private var protection: MediaProtection
    /// Datagrams of the protection made before our side selected a pair (the remote's DTLS
    /// ClientHello can arrive first): sent once one is, instead of waiting for a retransmission.
    private var heldForPair: [[UInt8]] = []
    static let heldForPairLimit = 16
    private var outputs = OutputQueue<Output>()
    private var seed: UInt64
    private var hungUp = false
    /// Set inside a step when the call must end; acted on when the step is over.
    private var pendingFailure: String?
    private var mediaDone = false
    /// How the call ended, once it has.
    public private(set) var ending: Ending?
    /// When the call fails for want of a selected pair, and when it has been held long enough.
    private var connectDeadline: Instant?
    private var holdDeadline: Instant?
    /// Set when the media budget ran out: more media output is due at once.
    private var mediaBacklog: Instant?
    /// Why the last TURN allocation failed, if one did.
    public private(set) var relayFailure: String?
    /// Set when the path of a connected call failed: a new epoch must select a pair by then.
    private var reconnectDeadline: Instant?
    /// ICE restarts tried since the call first connected.
    public private(set) var reconnectAttempts = 0

    /// The reason a call ends with when its remote peer cannot be reached any more.
    public static let remoteUnreachable = "remote unreachable"

    public init(configuration: PeerCallConfiguration, binding: RoomBinding) throws(SignalRecordError) {
        self.configuration = configuration
        seed = configuration.seed
        media = CallMedia(configuration: configuration.media, seed: configuration.seed)
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
        signaling = try CallSignaling(
            configuration: signalingConfiguration, binding: binding, myUserID: configuration.myUserID,
            remoteUserID: configuration.remoteUserID, epochClock: configuration.epochClock, seed: configuration.seed)
        protection = MediaProtection(security: configuration.mediaSecurity)
    }

    /// The ICE state of the current epoch's transport, when there is one.
    public var transport: ICETransport? { current?.transport }

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        step(input, now: now)
        // Endings found in the middle of a step are acted on once it is over.
        if let failure = pendingFailure {
            pendingFailure = nil
            hangUp(.failed(failure), now: now)
        }
        if mediaDone {
            mediaDone = false
            hangUp(.completed, now: now)
        }
    }

    private mutating func step(_ input: Input, now: Instant) {
        switch input {
        case .start:
            milestones.started = milestones.started ?? now
            if let timeout = configuration.lifetime.connectTimeout { connectDeadline = now + timeout }
            signal(.start, now: now)
        case .signaling(let event):
            signal(event, now: now)
        case .hangUp:
            hangUp(.completed, now: now)
        case .timer:
            if let deadline = connectDeadline, deadline <= now, selectedPair == nil {
                let relay = relayFailure.map { "; relay \($0)" } ?? ""
                hangUp(.failed("no connection within \(configuration.lifetime.connectTimeout!) (call "
                               + "\(signaling.negotiator.state), ICE \(iceState))\(relay)"), now: now)
            }
            if let deadline = holdDeadline, deadline <= now { hangUp(.completed, now: now) }
            if let deadline = reconnectDeadline, deadline <= now {
                hangUp(.failed("\(Self.remoteUnreachable): no path within \(configuration.lifetime.reconnectTimeout) "
                               + "after ICE failed (\(reconnectAttempts) restart(s) tried)"), now: now)
            }
            if let wake = signaling.nextDeadline, wake <= now { signal(.timer, now: now) }
            if let deadline = current?.transport?.nextDeadline, deadline <= now {
                current!.transport!.handle(.timer, now: now)
                drainTransport(now: now)
            }
            protection.timer(now: now)
            drainProtection(now: now)
            media.handle(.timer, now: now)
            drainMedia(now: now)
        case .datagram(let bytes, let from, let to):
            guard current?.transport != nil else { return }
            current!.transport!.handle(.datagram(bytes, from: from, to: to), now: now)
            drainTransport(now: now)
        }
    }

    /// The next output, or nil until the next input.
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// When to feed `.timer` next.
    public var nextDeadline: Instant? {
        let own: Instant? = hungUp ? nil : .earliest(.earliest(selectedPair == nil ? connectDeadline : nil,
                                                                holdDeadline), reconnectDeadline)
        return .earliest(.earliest(.earliest(signaling.nextDeadline, current?.transport?.nextDeadline),
                                   .earliest(media.nextDeadline, mediaBacklog)),
                         .earliest(own, hungUp ? nil : protection.nextDeadline))
    }

    /// Whether the call has hung up (its goodbye may still be in the store requests it asked for).
    public var hasHungUp: Bool { hungUp }

    /// Hangs up once: stops media, says goodbye through the store, stops ICE.
    private mutating func hangUp(_ how: Ending, now: Instant) {
        guard !hungUp else { return }
        hungUp = true
        ending = how
        connectDeadline = nil
        holdDeadline = nil
        reconnectDeadline = nil
        media.handle(.stop, now: now)
        drainMedia(now: now)
        signal(.hangUp, now: now)
        milestones.ended = now
        outputs.append(.event(.ended(how)))
    }

    // MARK: - Signaling

    private mutating func signal(_ event: CallSignaling.Event, now: Instant) {
        var queue = signaling.outputs(after: event, now: now)
        var next = 0
        while next < queue.count {
            let action = queue[next]
            next += 1
            switch action {
            case .store(let request, let origin):
                outputs.append(.store(request, origin: origin))
            case .ice(let command):
                for iceEvent in perform(command, now: now) {
                    queue += signaling.outputs(after: .ice(iceEvent), now: now)
                }
            case .report(let state):
                if case .connecting = state, milestones.signalingComplete == nil { milestones.signalingComplete = now }
                if case .connected = state, milestones.signalingComplete == nil { milestones.signalingComplete = now }
                outputs.append(.event(.callState(state)))
            case .zoneUnavailable(let path, let error):
                outputs.append(.event(.zoneUnavailable("\(path): \(error)")))
                pendingFailure = pendingFailure ?? "the room's zone is unavailable: \(path): \(error)"
            case .rejected(let problem):
                outputs.append(.event(.rejectedRecord(problem.description)))
            }
        }
    }

    /// Carries out an ICE command; returns what the agent reports back at once.
    private mutating func perform(_ command: ICECommand, now: Instant) -> [ICEEvent] {
        switch command {
        case .restartICE(let epoch, let credentials):
            current?.transport?.close()
            drainTransport(now: now)
            current = EpochTransport(epoch: epoch, credentials: credentials)
            return []
        case .setLocalDescription(let epoch, let description):
            guard current?.epoch == epoch else { return [] }
            media.handle(.localDescription(description), now: now)
            seed &+= 1
            do {
                try current!.start(role: description.type == .offer ? .controlling : .controlled,
                                   configuration: configuration.transport, seed: seed, now: now)
            } catch {
                return [.failed(epoch: epoch)]
            }
            return collectTransport(now: now)
        case .applyRemoteDescription(let epoch, let description):
            guard current?.epoch == epoch else { return [] }
            media.handle(.remoteDescription(description), now: now)
            if let problem = media.problem { pendingFailure = pendingFailure ?? problem }
            protection.remoteDescription(description)
            drainProtection(now: now)
            // The video section's transport: a browser's offer may put audio first (RFC 8843 §7.3.3:
            // with the first bundled section rejected, the accepted video section carries the bundle).
            let section = description.media.first { $0.kind == .video && !$0.isRejected } ?? description.media.first
            let credentials = section.flatMap { description.iceCredentials(for: $0) }
            let candidates = section?.candidates.compactMap(\.iceCandidate) ?? []
            let previous = current!.remoteCredentials
            do {
                try current!.setRemote(credentials: credentials, candidates: candidates,
                                       ended: section?.hasEndOfCandidates ?? false)
            } catch {
                return [.failed(epoch: epoch)]
            }
            var events = collectTransport(now: now)
            // The same credentials again on a connected epoch: a renegotiation without an ICE
            // restart, which leaves the ICE connection up (RFC 8839 §4.4.1.1.1). The negotiator
            // went back to connecting when it applied the description; tell it the connection
            // stands (the `legacy` configuration re-applies old offers like this).
            if previous != nil, previous == credentials, current!.transport?.selectedPair != nil,
               iceState == .connected || iceState == .completed {
                events.append(.connected(epoch: epoch))
            }
            return events
        case .addRemoteCandidates(let epoch, let candidates, let ended):
            guard current?.epoch == epoch else { return [] }
            current!.add(candidates.compactMap(\.iceCandidate), ended: ended)
            return collectTransport(now: now)
        case .close:
            current?.transport?.close()
            drainTransport(now: now)
            return []
        }
    }

    /// Drains the transport outside of a signaling step, feeding ICE events to signaling.
    private mutating func drainTransport(now: Instant) {
        let events = collectTransport(now: now)
        for event in events { signal(.ice(event), now: now) }
    }

    /// Drains the transport: transmits go out, data goes to media, ICE events are returned.
    private mutating func collectTransport(now: Instant) -> [ICEEvent] {
        guard current?.transport != nil else { return [] }
        let epoch = current!.epoch
        let ufrag = current!.credentials.usernameFragment
        var events: [ICEEvent] = []
        var candidates: [ICECandidate] = []
        while let output = current!.transport!.pollOutput() {
            switch output {
            case .transmit(let bytes, let from, let to):
                outputs.append(.transmit(bytes, from: from, to: to))
            case .event(.localCandidate(let candidate)):
                candidates.append(ICECandidate(candidate, usernameFragment: ufrag))
            case .event(.gatheringComplete):
                if !candidates.isEmpty { events.append(.localCandidates(epoch: epoch, candidates)) }
                candidates.removeAll()
                events.append(.gatheringComplete(epoch: epoch))
            case .event(.stateChanged(let state)):
                iceState = state
                outputs.append(.event(.iceState(state)))
                if state == .failed, pathFailed(now: now) { events.append(.failed(epoch: epoch)) }
            case .event(.selectedPair(let pair)):
                selectedPair = pair
                reconnectDeadline = nil
                if milestones.iceConnected == nil, let hold = configuration.lifetime.holdAfterConnect {
                    holdDeadline = now + hold
                }
                milestones.iceConnected = milestones.iceConnected ?? now
                outputs.append(.event(.selectedPair(pair)))
                events.append(.connected(epoch: epoch))
                let held = heldForPair
                heldForPair.removeAll()
                for bytes in held { sendOnSelectedPair(bytes) }
                protection.pairIsSelected(now: now)
                drainProtection(now: now)
            case .event(.data(let bytes, _)):
                protection.received(bytes, now: now)
                drainProtection(now: now)
            case .event(.relayAllocated(let relayed, let server)):
                outputs.append(.event(.relay("allocated \(relayed) on \(server)")))
            case .event(.relayFailed(let server, let code, let reason)):
                relayFailure = "TURN server \(server): \(code) \(reason)"
                outputs.append(.event(.relay("failed: \(relayFailure!)")))
            }
        }
        if !candidates.isEmpty { events.append(.localCandidates(epoch: epoch, candidates)) }
        return events
    }

    /// ICE failed on the current epoch — every pair failed, or consent on the selected pair
    /// expired (RFC 7675 §5.1). Before the first connection the connect timeout governs; after
    /// it, the negotiator restarts ICE in a new epoch (the offer creator starts it) and the call
    /// gives that `reconnectTimeout`, at most `reconnectAttempts` times, then ends.
    /// Returns whether the negotiator should hear of the failure (and may restart).
    private mutating func pathFailed(now: Instant) -> Bool {
        guard milestones.iceConnected != nil, !hungUp else { return true }
        guard reconnectAttempts < configuration.lifetime.reconnectAttempts else {
            pendingFailure = pendingFailure ?? "\(Self.remoteUnreachable): ICE failed "
                + "(\(reconnectAttempts) restart(s) tried)"
            return false
        }
        reconnectAttempts += 1
        reconnectDeadline = reconnectDeadline ?? now + configuration.lifetime.reconnectTimeout
        return true
    }

    // MARK: - Media protection

    /// Passes the protection's outputs on: datagrams to the pair, packets to the media, and the
    /// media's start once the path is secured.
    private mutating func drainProtection(now: Instant) {
        while let output = protection.pollOutput() {
            switch output {
            case .transmit(let bytes):
                sendOnSelectedPair(bytes)
            case .media(let bytes):
                media.handle(.packet(bytes), now: now)
                drainMedia(now: now)
            case .secured:
                milestones.mediaSecured = milestones.mediaSecured ?? now
                media.handle(.connected, now: now)
                drainMedia(now: now)
            case .failed(let reason):
                pendingFailure = pendingFailure ?? reason
            }
        }
    }

    /// Sends on the current transport's selected pair; before one is selected, holds a few.
    private mutating func sendOnSelectedPair(_ bytes: [UInt8]) {
        guard current?.transport != nil else { return }
        guard current!.transport!.selectedPair != nil else {
            if heldForPair.count < Self.heldForPairLimit { heldForPair.append(bytes) }
            return
        }
        try? current!.transport!.send(bytes)
        while let out = current!.transport!.pollOutput() {
            if case .transmit(let bytes, let from, let to) = out {
                outputs.append(.transmit(bytes, from: from, to: to))
            }
        }
    }

    // MARK: - Media

    /// At most this many media outputs per step, so a sender pacing `max` shares the loop with
    /// incoming datagrams and RTCP (the rest is taken at the next step, due at once).
    static let mediaBudget = 128

    private mutating func drainMedia(now: Instant) {
        var budget = Self.mediaBudget
        mediaBacklog = nil
        while let output = media.pollOutput() {
            budget -= 1
            if budget == 0 { mediaBacklog = now }
            switch output {
            case .packet(let bytes):
                protection.send(bytes, now: now)
                drainProtection(now: now)
            case .frame(let frame):
                milestones.firstFrame = milestones.firstFrame ?? now
                outputs.append(.event(.frame(frame)))
            case .finished:
                milestones.mediaFinished = milestones.mediaFinished ?? now
                outputs.append(.event(.mediaFinished))
                if configuration.lifetime.endAfterMedia { mediaDone = true }
            }
            if budget == 0 { break }
        }
    }
}
