// Our side of a call: starting it, starting epochs (spec §3), our offer and candidates, ICE's
// reports, hanging up.
import RecordStore
import SDP
import ZoneCore

extension CallNegotiator {
    /// Starts the call: read the session record by name first (its epoch is the floor, and
    /// seeds the epoch clock after a restart of the process or a clock step).
    mutating func startCall(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state == .idle else { return }
        state = .preparing
        collector?.start(now: now)
        // The name first, from the stored part alone.
        let session = names.session
        out.append(.lookup([RecordID(recordName: session, zoneID: zone)]))
    }

    /// The session record was looked up (or could not be): the peer that makes the first offer (the
    /// offer creator, or in a group call the later joiner) makes it, the other peer waits for it.
    ///
    /// The peer that waits for the offer first looks up the answer of the session's epoch: when it is
    /// there, that negotiation was finished by an earlier run (its offerer has moved on or gone), so the
    /// floor is the epoch after it and the old offer is stale, not answered again (PROTOCOL.md §5).
    mutating func sessionLookedUp(_ results: [LookupResult], now: Instant, _ out: inout OutputQueue<Action>) {
        guard state == .preparing else { return }
        if let checked = answerCheck {
            answerCheck = nil
            let answer = names.envelope(epoch: checked, type: .answer)
            if results.contains(where: { if case .found(let r) = $0 { r.id.recordName == answer } else { false } }) {
                inbox.raiseFloor(to: CallEpoch(milliseconds: checked.milliseconds &+ 1))
            }
        } else {
            if case .found(let record)? = results.first { learnSession(record, now: now, &out) }
            if !roles.makesFirstOffer, let floor = inbox.floor {
                answerCheck = floor
                out.append(.lookup([recordID(names.envelope(epoch: floor, type: .answer))]))
                return
            }
        }
        if roles.makesFirstOffer {
            startEpoch(now: now, &out)
        } else {
            state = .waitingForOffer
        }
        out.append(.fetchNow)
        // Held while the session record was read: the floor may have risen since.
        let early = deferred
        deferred = []
        for delivery in early where !inbox.isStale(delivery.epoch) { deliver(delivery, now: now, &out) }
    }

    /// Takes in a version of the session record: its epoch is known to exist, so ours must be
    /// higher, and everything below it is stale.
    /// A version that cannot be read, or names an epoch too far ahead, is dropped and reported; its
    /// change tag is still kept, so our next save goes over it (and replaces it).
    mutating func learnSession(_ record: Record, now: Instant, _ out: inout OutputQueue<Action>) {
        let session: SignalSession
        do {
            session = try SignalSession(decoding: record)
        } catch {
            sessionRecord = record
            out.append(.rejected(inbox.refuse(error)))
            return
        }
        if let refused = inbox.refusal(of: session.callEpoch, in: record, now: now) {
            sessionRecord = record
            out.append(.rejected(inbox.refuse(refused)))
            return
        }
        sessionRecord = record
        epochClock.observe(session.callEpoch)
        inbox.raiseFloor(to: session.callEpoch)
    }

    /// A new epoch of ours (restart, or the first offer of the call).
    mutating func restart(now: Instant, _ out: inout OutputQueue<Action>) {
        switch state {
        case .idle, .preparing, .ended: return
        case .waitingForOffer, .offering, .connecting, .connected: startEpoch(now: now, &out)
        }
    }

    /// Starts an epoch above every epoch known, makes the offer and publishes it with the
    /// session record in one atomic request (so a session naming an epoch implies its offer).
    mutating func startEpoch(now: Instant, _ out: inout OutputQueue<Action>) {
        let epoch = epochClock.next(now: now)
        enterEpoch(epoch, &out)
        counters.epochsStarted += 1
        negotiation.localOfferCreated()
        let offer = SessionDescription.silentVideoOffer(mediaConfiguration(localCredentials!))
        out.append(.ice(.setLocalDescription(epoch: epoch, offer)))
        state = .offering(epoch)
        let envelope = SignalEnvelope(
            sessionKey: sessionKey.rawValue, roomID: sessionKey.roomID.rawValue, callEpoch: epoch,
            ownerUserID: myUserID, envelopeType: .offer, description: offer,
            updatedAtMs: now.millisecondsSinceEpoch)
        let offerRecord = envelope.record(name: names.envelope(epoch: epoch, type: .offer), in: zone,
                                          payloads: configuration.payloads)
        sessionSaveAttempts = 1
        publish(epoch: epoch, offer: offerRecord, session: sessionVersion(epoch: epoch, now: now, over: sessionRecord),
                &out)
    }

    /// Our version of the session record naming `epoch`, over `base` (for its change tag).
    func sessionVersion(epoch: CallEpoch, now: Instant, over base: Record?) -> Record {
        SignalSession(sessionKey: sessionKey.rawValue, roomID: sessionKey.roomID.rawValue, userID: myUserID,
                      otherUserID: remoteUserID, callEpoch: epoch, updatedAtMs: now.millisecondsSinceEpoch)
            .record(over: base, name: names.session, in: zone)
    }

    /// Saves an offer and the session record: atomically and conditionally, or — with conflict
    /// resolution off, as the reference design did — each on its own, last writer wins.
    mutating func publish(epoch: CallEpoch, offer: Record, session: Record, _ out: inout OutputQueue<Action>) {
        saves[offer.id.recordName] = PendingSave(kind: .offer(epoch), record: offer)
        saves[session.id.recordName] = PendingSave(kind: .session(epoch), record: session)
        if protections.resolveConflicts {
            out.append(.modify([saveOperation(offer), saveOperation(session)], atomic: true))
        } else {
            out.append(.modify([saveOperation(offer)], atomic: false))
            out.append(.modify([saveOperation(session)], atomic: false))
        }
    }

    /// Makes `epoch` the active one: everything older is stale, the perfect-negotiation flags
    /// start over, and ICE restarts with fresh credentials (RFC 8445 §9).
    mutating func enterEpoch(_ epoch: CallEpoch, _ out: inout OutputQueue<Action>) {
        activeEpoch = epoch
        epochClock.observe(epoch)
        inbox.raiseFloor(to: epoch)
        negotiation.reset()
        let credentials = ICECredentials.random(using: &random)
        localCredentials = credentials
        localChunkSeq = 0
        out.append(.ice(.restartICE(epoch: epoch, credentials: credentials)))
    }

    /// Our offer of the active epoch lost to a higher epoch: send nothing more for it.
    mutating func abandonOffer(for newer: CallEpoch) {
        guard case .offering(let epoch) = state, epoch < newer else { return }
        counters.epochsAbandoned += 1
        negotiation.rollback()
        inbox.raiseFloor(to: newer)
        localCredentials = nil
        state = .waitingForOffer
    }

    mutating func hangUp(_ out: inout OutputQueue<Action>) {
        guard state != .ended else { return }
        let started = state != .idle
        state = .ended
        negotiation.reset()
        retries = []
        out.append(.ice(.close))
        // Goodbye: with GC configured, our records of this call leave the zone with us.
        guard started else { return }
        for batch in collector?.farewell() ?? [] {
            out.append(Self.deletions(batch))
        }
    }

    // MARK: ICE

    mutating func iceEvent(_ event: ICEEvent, now: Instant, _ out: inout OutputQueue<Action>) {
        switch event {
        case .localCandidates(let epoch, let candidates, let endOfCandidates):
            sendCandidates(candidates, endOfCandidates: endOfCandidates, epoch: epoch, now: now, &out)
        case .gatheringComplete(let epoch):
            sendCandidates([], endOfCandidates: true, epoch: epoch, now: now, &out)
        case .connected(let epoch):
            guard epoch == activeEpoch, state != .ended else { return }
            state = .connected(epoch)
            connectedEpoch = epoch
            collector?.epochConnected(now: now)
        case .failed(let epoch):
            guard epoch == activeEpoch, state != .ended else { return }
            if configuration.restartOnICEFailure && roles.isOfferCreator { startEpoch(now: now, &out) }
        }
    }

    /// Trickles our candidates of `epoch` as one chunk (RFC 8838 §4), numbered by `seq`; none
    /// for an epoch that is no longer ours.
    mutating func sendCandidates(_ candidates: [ICECandidate], endOfCandidates: Bool, epoch: CallEpoch,
                                 now: Instant, _ out: inout OutputQueue<Action>) {
        let live: Bool
        switch state {
        case .offering(let e), .connecting(let e), .connected(let e): live = e == epoch
        case .idle, .preparing, .waitingForOffer, .ended: live = false
        }
        guard live, epoch == activeEpoch, let credentials = localCredentials else {
            counters.localCandidatesDropped += candidates.count
            return
        }
        let chunk = SignalIceChunk(
            sessionKey: sessionKey.rawValue, roomID: sessionKey.roomID.rawValue, callEpoch: epoch,
            ownerUserID: myUserID, candidates: candidates, endOfCandidates: endOfCandidates,
            chunkCreatedAtMs: now.millisecondsSinceEpoch, seq: localChunkSeq, ufrag: credentials.usernameFragment)
        localChunkSeq += 1
        let record = chunk.record(name: names.iceChunk(epoch: epoch, owner: myUserID, uuid: chunkUUID()), in: zone,
                                  payloads: configuration.payloads)
        saves[record.id.recordName] = PendingSave(kind: .chunk(epoch), record: record)
        out.append(.modify([saveOperation(record)], atomic: false))
    }
}
