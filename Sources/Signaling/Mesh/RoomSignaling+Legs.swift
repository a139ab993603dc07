// Legs of a room's group call (docs/PROTOCOL.md §11.2–11.4): starting one per remote member with
// the roles the join order gives, stepping its negotiator, the bounds on waiting for its offer or
// answer, ICE's reports, and ending it (the negotiator's goodbye, its records handed to the pair
// collector).
import RecordStore
import ZoneCore

extension RoomSignaling {
    /// Starts a leg with `remote`. `makesFirstOffer`: whether we offer first (nil: the roles of a call
    /// of two, the lower user ID offers).
    mutating func startLeg(_ remote: String, memberSession: String?, makesFirstOffer: Bool?, now: Instant,
                           _ out: inout OutputQueue<Action>) {
        guard legs[remote] == nil, remote != myUserID else { return }
        let present = roster.present(now: now).count + 1
        let members = roster.isPresent(remote, now: now) ? present : present + 1
        let config = configuration.leg(remote: remote, members: members)
        let negotiator: CallNegotiator
        do {
            negotiator = try CallNegotiator(
                roomID: binding.roomID, myUserID: myUserID, remoteUserID: remote, zone: binding.zone,
                epochClock: epochClock, configuration: config, seed: random.next(), makesFirstOffer: makesFirstOffer)
        } catch {
            out.append(.rejected(remote: remote, .record(error)))
            return
        }
        generation += 1
        let id = LegID(remote: remote, generation: generation)
        let key = negotiator.sessionKey
        legs[remote] = RoomLeg(id: id, negotiator: negotiator, memberSession: memberSession, now: now)
        everHadLeg = true
        legByKey[key.rawValue] = remote
        pairs.release(key: key.rawValue)
        counters.legsStarted += 1
        out.append(.legStarted(LegStart(
            leg: id, sessionKey: key, makesFirstOffer: negotiator.roles.makesFirstOffer,
            isPolite: negotiator.roles.isPolite, memberSession: memberSession, configuration: config)))
        negotiate(remote, .startCall, now: now, &out)
    }

    /// Steps the negotiator of the leg with `remote` and passes its actions on: store requests are
    /// gathered for the event's batch, the rest go out in order.
    mutating func negotiate(_ remote: String, _ event: CallNegotiator.Event, now: Instant,
                            _ out: inout OutputQueue<Action>) {
        guard let id = legs[remote]?.id else { return }
        var actions = OutputQueue<CallNegotiator.Action>()
        legs[remote]?.negotiator.step(event, now: now, &actions)
        var goodbye: (epoch: CallEpoch, type: EnvelopeType)?
        var answered: [[LookupResult]] = []
        while let action = actions.pop() {
            switch action {
            case .lookup(let ids) where pairRecords.isWhole && legs[remote]?.negotiator.state == .preparing:
                // A leg's first reads (§5's session record, the answer of its epoch): the feed holds them.
                answered.append(pairRecords.lookup(ids))
            case .modify, .lookup:
                if let request = action.storeRequest(scope: binding.scope) { legs[remote]?.requests.count(request) }
                gathered.append(LegRequest(leg: id, action: action))
            case .fetchNow: fetchNow(now: now, &out)
            case .ice(let command): out.append(.ice(remote: remote, command))
            case .report(let state): out.append(.report(remote: remote, state))
            case .rejected(let problem): out.append(.rejected(remote: remote, problem))
            case .remoteHungUp(let epoch, let type): goodbye = (epoch, type)
            }
        }
        if let last = legs[remote]?.negotiator.epochClock.last { epochClock.observe(last) }
        legs[remote]?.noteState(now: now)
        if let goodbye {
            endLeg(remote, .remoteHungUp(epoch: goodbye.epoch, goodbye.type), now: now, &out)
            return
        }
        for results in answered {
            counters.lookupsFromFeed += 1
            negotiate(remote, .lookedUp(results), now: now, &out)
        }
    }

    /// Ends the leg with `remote`: its negotiator hangs up (ICE closes, our records of the pair go),
    /// and the pair's other records are kept for collection once both its users are gone.
    mutating func endLeg(_ remote: String, _ reason: LegEndReason, now: Instant, _ out: inout OutputQueue<Action>) {
        guard var leg = legs.removeValue(forKey: remote) else { return }
        let key = leg.negotiator.sessionKey.rawValue
        legByKey[key] = nil
        var actions = OutputQueue<CallNegotiator.Action>()
        leg.negotiator.step(.hangUp, now: now, &actions)
        while let action = actions.pop() {
            switch action {
            case .modify(let operations, _): cleanup += operations.lazy.filter(\.isDelete).map(\.recordID)
            case .ice(let command): out.append(.ice(remote: remote, command))
            case .report(let state): out.append(.report(remote: remote, state))
            case .lookup, .fetchNow, .rejected, .remoteHungUp: break
            }
        }
        pairs.note(key: key, users: [myUserID, remote],
                   ids: [leg.sessionRecordID] + (leg.negotiator.collector?.remainingRecords ?? []))
        counters.legsEnded += 1
        legEndedAtMs[remote] = now.millisecondsSinceEpoch
        if case .unanswered = reason { counters.unanswered += 1 }
        out.append(.legEnded(leg.id, reason, Self.counters(of: leg)))
    }

    /// The bounds on waiting (docs/PROTOCOL.md §11.2): a member leg still waiting for the offer its
    /// partner owes after `offerFallback` offers itself; a leg whose lookup, expected offer (after the
    /// fallback) or answer has not come within `answerTimeout` ends unanswered.
    mutating func legTimers(now: Instant, _ out: inout OutputQueue<Action>) {
        for remote in legs.keys.sorted() {
            guard let leg = legs[remote], let since = leg.waitingSince else { continue }
            if leg.memberSession != nil, !leg.fellBack, leg.negotiator.state == .waitingForOffer {
                guard now >= since + configuration.offerFallback else { continue }
                legs[remote]?.fellBack = true
                counters.fallbackOffers += 1
                negotiate(remote, .restart, now: now, &out)
                legs[remote]?.waitingSince = now
            } else if now >= since + configuration.answerTimeout {
                if let session = leg.memberSession { finishedSessions.insert("\(remote) \(session)") }
                endLeg(remote, .unanswered(after: now - since), now: now, &out)
            }
        }
    }

    /// A leg's ICE agent reports. ICE failing on a leg whose member's presence has run out ends the leg
    /// (the member crashed: its consent expired, RFC 7675); otherwise the negotiator decides (the offer
    /// creator restarts, docs/PROTOCOL.md §6).
    mutating func iceReported(_ remote: String, _ event: ICEEvent, now: Instant, _ out: inout OutputQueue<Action>) {
        guard let leg = legs[remote] else { return }
        if case .connected = event { legs[remote]?.iceFailed = nil }
        if case .failed(let epoch) = event, epoch == leg.negotiator.activeEpoch {
            legs[remote]?.iceFailed = epoch
            if leg.memberSession != nil, !roster.isPresent(remote, now: now) {
                endLeg(remote, .remoteExpired, now: now, &out)
                return
            }
        }
        negotiate(remote, .ice(event), now: now, &out)
    }
}
