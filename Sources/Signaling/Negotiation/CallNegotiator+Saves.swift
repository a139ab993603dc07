// Results of our saves and deletions: `serverRecordChanged` on the session record merged by the
// maximum epoch (bounded retries), colliding offers of one epoch settled by the epoch-glare rule
// (spec §3), throttling waited out (`retryAfter`, docs/STORE.md "Throttling and errors").
import RecordStore
import ZoneCore

extension CallNegotiator {
    mutating func modified(_ result: ModifyRecordsResult, now: Instant, _ out: inout OutputQueue<Action>) {
        var failures: [(PendingSave, StoreError)] = []
        for item in result.results {
            switch item {
            case .saved(let record):
                saved(record, reportedByStore: true)
            case .deleted(let id):
                collector?.deleted(id)
            case .failed(let id, let error):
                if collector?.isDeleting(id.recordName) == true {
                    collector?.deleteFailed(id, error)
                } else if let pending = saves.removeValue(forKey: id.recordName) {
                    failures.append((pending, error))
                }
            }
        }
        handleFailures(failures, now: now, &out)
    }

    mutating func requestFailed(_ action: Action, _ error: StoreError, now: Instant, _ out: inout OutputQueue<Action>) {
        switch action {
        case .modify(let operations, _):
            var failures: [(PendingSave, StoreError)] = []
            for operation in operations {
                let id = operation.recordID
                if operation.isDelete {
                    if collector?.isDeleting(id.recordName) == true { collector?.deleteFailed(id, error) }
                } else if let pending = saves.removeValue(forKey: id.recordName) {
                    failures.append((pending, error))
                }
            }
            handleFailures(failures, now: now, &out)
        case .lookup:
            if error.code.isRetryable {
                retry(action, error, now: now)
            } else {
                sessionLookedUp([], now: now, &out)
            }
        case .fetchNow, .ice, .report, .rejected, .remoteHungUp:
            break
        }
    }

    /// One of our saves landed: `record` is the version the store holds. `reportedByStore` when the
    /// store's result says so, not when a conflict's server record only names us as its owner.
    private mutating func saved(_ record: Record, reportedByStore: Bool = false) {
        guard let pending = saves.removeValue(forKey: record.id.recordName) else { return }
        retryAttempt = 0
        let epoch = pending.kind.epoch
        switch pending.kind {
        case .offer:
            if epoch == activeEpoch { negotiation.localOfferPublished() }
        case .session:
            sessionRecord = record
            sessionSaveAttempts = 0
            return
        case .chunk:
            // The store's word that this version is ours: fetched, it need not be decoded.
            if reportedByStore { inbox.ownChunkSaved(record, epoch: epoch) }
        case .answer:
            break
        }
        collector?.observe(SignalRecordSummary(id: record.id, recordType: record.recordType, callEpoch: epoch,
                                               ownerUserID: myUserID, modifiedMs: record.modified?.timestamp))
    }

    private mutating func handleFailures(_ failures: [(PendingSave, StoreError)], now: Instant,
                                         _ out: inout OutputQueue<Action>) {
        guard !failures.isEmpty else { return }
        let offer = failures.first { if case .offer = $0.0.kind { true } else { false } }
        let session = failures.first { if case .session = $0.0.kind { true } else { false } }
        if offer != nil || session != nil {
            publicationFailed(offer: offer, session: session, now: now, &out)
        }
        for (pending, error) in failures {
            switch pending.kind {
            case .offer, .session: continue
            case .answer, .chunk: saveFailed(pending, error, now: now)
            }
        }
    }

    /// An answer or chunk was not saved.
    private mutating func saveFailed(_ pending: PendingSave, _ error: StoreError, now: Instant) {
        if error.code == .serverRecordChanged, let server = error.serverRecord,
            server.fields[SignalField.ownerUserId]?.stringValue == myUserID {
            // An earlier attempt of ours landed (a retry after a lost answer).
            saves[pending.record.id.recordName] = pending
            saved(server)
        } else if error.code.isRetryable {
            saves[pending.record.id.recordName] = pending
            retry(.modify([saveOperation(pending.record)], atomic: false), error, now: now)
        } else {
            counters.saveFailures += 1
        }
    }

    /// The publication of an epoch (offer + session record) failed.
    private mutating func publicationFailed(offer: (PendingSave, StoreError)?, session: (PendingSave, StoreError)?,
                                            now: Instant, _ out: inout OutputQueue<Action>) {
        let epoch = (offer ?? session)!.0.kind.epoch
        guard epoch == activeEpoch, case .offering(epoch) = state else { return }
        if let (pending, error) = offer, error.code == .serverRecordChanged {
            offerCollided(pending, server: error.serverRecord, now: now, &out)
        } else if let (_, error) = session, error.code == .serverRecordChanged {
            sessionCollided(epoch: epoch, offer: offer?.0.record, server: error.serverRecord, now: now, &out)
        } else if let error = [offer?.1, session?.1].compactMap({ $0 }).first(where: { $0.code.isRetryable }) {
            let records = [offer?.0, session?.0].compactMap { $0 }
            for pending in records { saves[pending.record.id.recordName] = pending }
            retry(.modify(records.map { saveOperation($0.record) }, atomic: protections.resolveConflicts),
                  error, now: now)
        } else {
            counters.saveFailures += 1
        }
    }

    /// Our offer's name was taken: the other peer started the same epoch at the same
    /// millisecond. On a tie the offer creator's epoch wins (spec §3): the creator overwrites
    /// the other offer; the other peer rolls its offer back and answers the creator's.
    private mutating func offerCollided(_ pending: PendingSave, server: Record?, now: Instant,
                                        _ out: inout OutputQueue<Action>) {
        guard let server, let theirs = try? SignalEnvelope(decoding: server) else {
            counters.saveFailures += 1
            return
        }
        if theirs.ownerUserID == myUserID {
            saves[pending.record.id.recordName] = pending
            saved(server)
            return
        }
        if roles.isOfferCreator {
            var record = pending.record
            record.recordChangeTag = server.recordChangeTag
            saves[record.id.recordName] = PendingSave(kind: pending.kind, record: record)
            counters.saveRetries += 1
            // The server's tag on our offer: it replaces theirs only if nothing changed meanwhile.
            out.append(.modify([.replace(record)], atomic: false))
        } else {
            // The server's record is data like any other: through the inbox, to perfect negotiation.
            recordsFetched([server], deleted: [], now: now, &out)
        }
    }

    /// Someone else updated the session record since we read it: merge by the maximum epoch
    /// (spec §3). A higher epoch there means our offer lost; a lower one is retried over the
    /// server's version, at most `sessionSaveAttempts` times in all.
    private mutating func sessionCollided(epoch: CallEpoch, offer: Record?, server: Record?, now: Instant,
                                          _ out: inout OutputQueue<Action>) {
        counters.sessionConflicts += 1
        guard let server else {
            counters.saveFailures += 1
            return
        }
        // A version that cannot be read or names an epoch too far ahead is dropped and reported,
        // and ours is saved over it like over a lower epoch: the pair's session must stay usable.
        var theirs: SignalSession?
        do {
            let decoded = try SignalSession(decoding: server)
            if let refused = inbox.refusal(of: decoded.callEpoch, in: server, now: now) {
                out.append(.rejected(inbox.refuse(refused)))
            } else {
                theirs = decoded
            }
        } catch {
            out.append(.rejected(inbox.refuse(error)))
        }
        sessionRecord = server
        if let theirs { epochClock.observe(theirs.callEpoch) }
        if let theirs, theirs.callEpoch > epoch {
            abandonOffer(for: theirs.callEpoch)
            out.append(.fetchNow)
            return
        }
        if let theirs, theirs.callEpoch == epoch {
            negotiation.localOfferPublished()
            return
        }
        sessionSaveAttempts += 1
        guard sessionSaveAttempts <= configuration.sessionSaveAttempts, let offer else {
            counters.saveFailures += 1
            return
        }
        counters.saveRetries += 1
        publish(epoch: epoch, offer: offer, session: sessionVersion(epoch: epoch, now: now, over: server), &out)
    }

    /// Sends `action` again after the store's `retryAfter`, or after an exponential backoff.
    mutating func retry(_ action: Action, _ error: StoreError, now: Instant) {
        let wait: Duration
        if let seconds = error.retryAfter, seconds.isFinite, seconds >= 0 {
            // The store's value: bounded before conversion (a huge or odd one must not trap).
            let cap = Double(configuration.retryCap.nanoseconds) / 1e9
            wait = .milliseconds(Int64((min(seconds, cap) * 1000).rounded(.up)))
        } else {
            let base = configuration.retryBase.nanoseconds
            let scaled = base.multipliedReportingOverflow(by: Int64(1) << min(retryAttempt, 30))
            wait = .nanoseconds(scaled.overflow ? configuration.retryCap.nanoseconds
                                : min(scaled.partialValue, configuration.retryCap.nanoseconds))
            retryAttempt += 1
        }
        counters.saveRetries += 1
        retries.append((now + wait, action))
    }

    /// Sends the retries that are due.
    mutating func timer(now: Instant, _ out: inout OutputQueue<Action>) {
        guard state != .ended else { return }
        let due = retries.filter { $0.at <= now }
        retries.removeAll { $0.at <= now }
        for retry in due { out.append(retry.action) }
    }
}
