// What the remote peer wrote, as the inbox delivers it: its session record, its offers and
// answers (epoch rules of spec §3 first, then perfect negotiation within an epoch, spec §4), and
// its candidates.
import RecordStore
import SDP
import ZoneCore

extension CallNegotiator {
    mutating func recordsFetched(_ records: [Record], deleted: [RecordID], now: Instant,
                                 _ out: inout OutputQueue<Action>) {
        collector?.forget(deleted)
        let output = inbox.ingest(records, now: now)
        for problem in output.problems { out.append(.rejected(problem)) }
        collector?.observe(output.observed)
        // Our own answers in the zone: those epochs were answered, whatever this process remembers.
        // Every answer's name, compacted or not, is `SE_…_answer`: other names are passed over
        // before the epoch's name is built.
        for summary in output.observed where summary.ownerUserID == myUserID
            && summary.id.recordName.hasPrefix("SE_") && summary.id.recordName.hasSuffix("_answer")
            && summary.id.recordName == names.envelope(epoch: summary.callEpoch, type: .answer) {
            answeredEpochs.insert(summary.callEpoch)
        }
        for delivery in output.deliveries { deliver(delivery, now: now, &out) }
        // After the records: a newer epoch in the same batch is the active one by now.
        remoteGoodbye(in: deleted, &out)
    }

    /// The remote's description of the active epoch leaving the zone is its goodbye: GC never
    /// deletes a record of the active epoch (docs/PROTOCOL.md §7), so nothing else takes it away.
    /// Reported, not acted on: the call decides how it ends.
    mutating func remoteGoodbye(in deleted: [RecordID], _ out: inout OutputQueue<Action>) {
        guard !deleted.isEmpty, let epoch = activeEpoch, state.epoch == epoch,
              let applied = remoteDescriptions[epoch] else { return }
        switch state {
        case .connecting, .connected: break
        case .idle, .preparing, .waitingForOffer, .offering, .ended: return
        }
        for type in EnvelopeType.allCases where applied.contains(type) {
            let name = names.envelope(epoch: epoch, type: type)
            if deleted.contains(where: { $0.zoneID == zone && $0.recordName == name }) {
                out.append(.remoteHungUp(epoch: epoch, type))
                return
            }
        }
    }

    mutating func deliver(_ delivery: SignalInbox.Delivery, now: Instant, _ out: inout OutputQueue<Action>) {
        switch state {
        case .idle, .preparing:
            deferred.append(delivery)
            return
        case .ended:
            return
        case .waitingForOffer, .offering, .connecting, .connected:
            break
        }
        switch delivery {
        case .session(let session, let record):
            remoteSession(session, record)
        case .envelope(let envelope, _):
            switch envelope.envelopeType {
            case .offer: remoteOffer(envelope, now: now, &out)
            case .answer: remoteAnswer(envelope, now: now, &out)
            }
        case .candidates(let epoch, _, let candidates, let endOfCandidates):
            remoteCandidates(candidates, endOfCandidates: endOfCandidates, epoch: epoch, &out)
        }
    }

    /// The remote peer's session record: its epoch exists (saved atomically with its offer), so
    /// everything older is stale, and an offer of ours below it has lost (spec §3, epoch glare).
    mutating func remoteSession(_ session: SignalSession, _ record: Record) {
        sessionRecord = record
        epochClock.observe(session.callEpoch)
        guard protections.dropStaleEpochs, inbox.floor.map({ session.callEpoch > $0 }) ?? true else { return }
        inbox.raiseFloor(to: session.callEpoch)
        abandonOffer(for: session.callEpoch)
    }

    /// A remote offer. A higher epoch than ours starts that epoch (the call's first offer, or a
    /// remote restart: higher epochs win glare); the same epoch goes through perfect
    /// negotiation; an offer of an epoch already set or answered is never applied again.
    mutating func remoteOffer(_ envelope: SignalEnvelope, now: Instant, _ out: inout OutputQueue<Action>) {
        let epoch = envelope.callEpoch
        epochClock.observe(epoch)
        if protections.ignoreRepeatedDescriptions
            && (answeredEpochs.contains(epoch) || remoteDescriptions[epoch]?.contains(.offer) == true) {
            counters.repeatedDescriptionsIgnored += 1
            return
        }
        if activeEpoch.map({ epoch != $0 }) ?? true {
            if activeEpoch != nil { counters.remoteRestarts += 1 }
            if case .offering = state { counters.epochsAbandoned += 1 }
            enterEpoch(epoch, &out)
            _ = negotiation.receive(.offer)
            answer(envelope, now: now, &out)
            return
        }
        switch negotiation.receive(.offer) {
        case .ignore:
            // The impolite peer keeps its own offer. The ignored offer's candidates stay held in
            // the inbox and are never applied for it: they go with the epoch if it is left, or
            // flow once the same peer's answer of this epoch (one ICE generation per epoch, so
            // the same ufrag) is applied.
            counters.glareIgnored += 1
        case .rollbackAndApply:
            counters.glareYielded += 1
            answer(envelope, now: now, &out)
        case .apply, .outOfState:
            answer(envelope, now: now, &out)
        }
    }

    /// Applies a remote offer of the active epoch and publishes our answer; our ICE credentials
    /// of the epoch stay (one ICE generation per epoch), so candidates already sent remain good.
    mutating func answer(_ offer: SignalEnvelope, now: Instant, _ out: inout OutputQueue<Action>) {
        let epoch = offer.callEpoch
        noteApplication(of: .offer, epoch: epoch)
        negotiation.remoteDescriptionApplied(.offer)
        out.append(.ice(.applyRemoteDescription(epoch: epoch, offer.description)))
        guard let credentials = localCredentials else { return }
        let answer: SessionDescription
        do {
            answer = try SessionDescription.answer(to: offer.description, mediaConfiguration(credentials))
        } catch {
            counters.negotiationFailures += 1
            return
        }
        out.append(.ice(.setLocalDescription(epoch: epoch, answer)))
        negotiation.localAnswerSet()
        state = .connecting(epoch)
        let envelope = SignalEnvelope(
            sessionKey: sessionKey.rawValue, roomID: sessionKey.roomID.rawValue, callEpoch: epoch,
            ownerUserID: myUserID, envelopeType: .answer, description: answer, updatedAtMs: now.millisecondsSinceEpoch)
        let record = envelope.record(name: names.envelope(epoch: epoch, type: .answer), in: zone,
                                     payloads: configuration.payloads)
        saves[record.id.recordName] = PendingSave(kind: .answer(epoch), record: record)
        answeredEpochs.insert(epoch)
        out.append(.modify([saveOperation(record)], atomic: false))
        releaseCandidates(of: offer, &out)
    }

    /// A remote answer: applied once, to our outstanding offer of the same epoch (the inbox has
    /// dropped older epochs; a later one answers no offer of ours).
    mutating func remoteAnswer(_ envelope: SignalEnvelope, now: Instant, _ out: inout OutputQueue<Action>) {
        let epoch = envelope.callEpoch
        if protections.dropStaleEpochs && epoch != activeEpoch { return }
        if protections.ignoreRepeatedDescriptions && remoteDescriptions[epoch]?.contains(.answer) == true {
            counters.repeatedDescriptionsIgnored += 1
            return
        }
        if negotiation.receive(.answer) == .outOfState && protections.ignoreRepeatedDescriptions {
            counters.repeatedDescriptionsIgnored += 1
            return
        }
        noteApplication(of: .answer, epoch: epoch)
        negotiation.remoteDescriptionApplied(.answer)
        out.append(.ice(.applyRemoteDescription(epoch: epoch, envelope.description)))
        if case .offering(let offered) = state, offered == epoch { state = .connecting(epoch) }
        releaseCandidates(of: envelope, &out)
    }

    /// Counts an application of a remote description: a second one of the same epoch and type is
    /// a duplicate, and an offer over a description of the same or a later epoch is a reset.
    mutating func noteApplication(of type: EnvelopeType, epoch: CallEpoch) {
        if type == .offer && remoteDescriptions.contains(where: { $0.key >= epoch && !$0.value.isEmpty }) {
            counters.resets += 1
        }
        if remoteDescriptions[epoch]?.contains(type) == true { counters.duplicateApplies += 1 }
        remoteDescriptions[epoch, default: []].insert(type)
        counters.descriptionsApplied += 1
    }

    /// Hands over the candidates the inbox held for the description's epoch.
    mutating func releaseCandidates(of envelope: SignalEnvelope, _ out: inout OutputQueue<Action>) {
        guard let ufrag = Self.ufrag(of: envelope.description) else { return }
        for delivery in inbox.remoteDescriptionApplied(epoch: envelope.callEpoch, ufrag: ufrag) {
            if case .candidates(let epoch, _, let candidates, let end) = delivery {
                remoteCandidates(candidates, endOfCandidates: end, epoch: epoch, &out)
            }
        }
    }

    /// Remote candidates, in order, for the ICE agent.
    mutating func remoteCandidates(_ candidates: [ICECandidate], endOfCandidates: Bool, epoch: CallEpoch,
                                   _ out: inout OutputQueue<Action>) {
        for candidate in candidates
        where !appliedCandidates.insert(AppliedCandidate(epoch: epoch, candidate: candidate)).inserted {
            counters.duplicateApplies += 1
        }
        counters.candidatesApplied += candidates.count
        out.append(.ice(.addRemoteCandidates(epoch: epoch, candidates, endOfCandidates: endOfCandidates)))
    }
}
