// Remote candidates of one epoch, spec §4: held until the epoch's remote description is applied,
// applied exactly once and in `seq` order, nothing after end-of-candidates (RFC 8838 §13), and
// only chunks whose `ufrag` matches the description's (RFC 8839 §5.4: candidates belong to one
// ICE generation).

/// The remote peer's chunks of one epoch, on their way to the negotiator.
struct CandidateQueue: Sendable {
    let epoch: CallEpoch
    /// The remote description's ufrag, once it is applied; until then chunks wait.
    private(set) var remoteUfrag: String?
    /// The seq of the next chunk to hand over.
    private var nextSeq: Int64 = 0
    /// The seq of the end-of-candidates chunk, once handed over.
    private var endSeq: Int64?
    /// Chunks received and not handed over yet, by seq (or in arrival order, unordered).
    private var waiting: [Int64: SignalIceChunk] = [:]
    private var unordered: [SignalIceChunk] = []

    init(epoch: CallEpoch) { self.epoch = epoch }

    /// Chunks held, for the discard count when the epoch is left.
    var heldCount: Int { waiting.count + unordered.count }

    /// Takes a chunk; returns what can be handed over now.
    mutating func insert(_ chunk: SignalIceChunk, _ protections: SignalingProtections,
                         _ counters: inout SignalInbox.Counters) -> [SignalInbox.Delivery] {
        let holding = protections.holdEarlyCandidates && remoteUfrag == nil
        guard protections.orderChunks else {
            if holding {
                counters.earlyCandidateHolds += 1
                unordered.append(chunk)
                return []
            }
            return hand(chunk, protections, &counters).map { [$0] } ?? []
        }
        if let endSeq, chunk.seq > endSeq {
            counters.afterEndOfCandidates += 1
            return []
        }
        if chunk.seq < nextSeq || waiting[chunk.seq] != nil {
            counters.duplicates += 1
            return []
        }
        waiting[chunk.seq] = chunk
        if holding {
            counters.earlyCandidateHolds += 1
            return []
        }
        if chunk.seq > nextSeq { counters.outOfOrderHolds += 1 }
        return drain(protections, &counters)
    }

    /// The epoch's remote description was applied with `ufrag`: hands over what waited.
    mutating func release(ufrag: String, _ protections: SignalingProtections,
                          _ counters: inout SignalInbox.Counters) -> [SignalInbox.Delivery] {
        remoteUfrag = ufrag
        guard protections.orderChunks else {
            let held = unordered
            unordered = []
            return held.compactMap { hand($0, protections, &counters) }
        }
        return drain(protections, &counters)
    }

    /// Hands over consecutive chunks from `nextSeq`; stops at a gap or after end-of-candidates.
    private mutating func drain(_ protections: SignalingProtections,
                                _ counters: inout SignalInbox.Counters) -> [SignalInbox.Delivery] {
        var out: [SignalInbox.Delivery] = []
        while let chunk = waiting.removeValue(forKey: nextSeq) {
            nextSeq += 1
            guard let delivery = hand(chunk, protections, &counters) else { continue }
            out.append(delivery)
            if chunk.endOfCandidates {
                endSeq = chunk.seq
                counters.afterEndOfCandidates += waiting.count
                waiting = [:]
                break
            }
        }
        return out
    }

    /// One chunk's candidates, after the ufrag check (of the chunk and of each candidate that
    /// names its ufrag); nil when the chunk is dropped.
    private func hand(_ chunk: SignalIceChunk, _ protections: SignalingProtections,
                      _ counters: inout SignalInbox.Counters) -> SignalInbox.Delivery? {
        var candidates = chunk.candidates
        if protections.checkUfrag, let ufrag = remoteUfrag {
            guard chunk.ufrag == ufrag else {
                counters.ufragMismatches += 1
                return nil
            }
            let before = candidates.count
            candidates.removeAll { $0.usernameFragment.map { $0 != ufrag } ?? false }
            counters.ufragMismatches += before - candidates.count
        }
        counters.delivered += 1
        return .candidates(epoch: chunk.callEpoch, owner: chunk.ownerUserID, candidates,
                           endOfCandidates: chunk.endOfCandidates)
    }
}
