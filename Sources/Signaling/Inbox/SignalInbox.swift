// The single inbox, spec §5 (concern A of seed 001: three ingestion paths fed the same records
// to the controller, which re-applied old-epoch ICE and offers and reset live calls).
//
// Every fetched record enters here, whatever fetched it (push-triggered fetch, token poll, full
// scan, a conflict's server record). The inbox:
//   1. drops a version it has seen, by (record name, change tag);
//   2. drops our own records (after noting them for garbage collection);
//   3. drops records of other sessions and records of epochs below the floor (the active epoch);
//   4. holds candidates that arrive before their epoch's description, per epoch;
//   5. hands chunks over once, in `seq` order, nothing after end-of-candidates, and only those
//      whose `ufrag` matches the epoch's remote description (spec §4);
// and hands the negotiator each remaining record once: sessions, then descriptions by epoch,
// then candidates.
import RecordStore
import SDP
import ZoneCore

/// Turns fetched records into deliveries for the negotiator, each once and in order.
public struct SignalInbox: Sendable {
    /// What the inbox saw and did.
    public struct Counters: Hashable, Sendable, Codable {
        /// Record versions received (every path, duplicates included).
        public var received = 0
        /// Versions dropped because seen before (or a chunk seq seen before).
        public var duplicates = 0
        /// Records of types signaling does not handle (messages, rooms, members).
        public var unrelated = 0
        /// Records that could not be read (`problems` says why).
        public var malformed = 0
        /// Candidate strings inside chunks that could not be read.
        public var invalidCandidates = 0
        /// Records of another pair's session.
        public var foreignSession = 0
        /// Our own records (noted for GC, never applied).
        public var ownRecords = 0
        /// Records (and held chunks) of epochs below the floor.
        public var staleDrops = 0
        /// Chunks held because their epoch's remote description was not applied yet.
        public var earlyCandidateHolds = 0
        /// Chunks held because an earlier seq had not arrived yet.
        public var outOfOrderHolds = 0
        /// Chunks after end-of-candidates.
        public var afterEndOfCandidates = 0
        /// Chunks (or candidates) whose ufrag did not match the remote description.
        public var ufragMismatches = 0
        /// Deliveries handed to the negotiator.
        public var delivered = 0

        public init() {}
    }

    /// Something for the negotiator.
    public enum Delivery: Hashable, Sendable {
        /// The remote peer's version of the session record.
        indirect case session(SignalSession, Record)
        /// A remote offer or answer. Indirect, as the session is: large, and a few a call beside the
        /// many deliveries of candidates.
        indirect case envelope(SignalEnvelope, Record)
        /// Remote candidates of one epoch, in order; `endOfCandidates` ends them.
        case candidates(epoch: CallEpoch, owner: String, [ICECandidate], endOfCandidates: Bool)

        /// The epoch the delivery belongs to.
        public var epoch: CallEpoch {
            switch self {
            case .session(let s, _): return s.callEpoch
            case .envelope(let e, _): return e.callEpoch
            case .candidates(let epoch, _, _, _): return epoch
            }
        }
    }

    /// A problem with something the remote peer wrote.
    public enum Problem: Hashable, Sendable, CustomStringConvertible {
        /// A record that could not be read (or was refused).
        case record(SignalRecordError)
        /// A candidate string inside a chunk that could not be read.
        case candidate(recordName: String, CandidateParseError)

        /// One line for the log: the record's name and what was wrong.
        public var description: String {
            switch self {
            case .record(let error): return "dropped \(error)"
            case .candidate(let name, let error):
                return "dropped a candidate of \(SDPGrammar.quoted(name, limit: 80)): \(error)"
            }
        }
    }

    /// Chunks held for one epoch at most (waiting for their description or an earlier seq); more
    /// are refused as malformed. Ours send a handful per epoch.
    public static let maxHeldChunks = 256

    /// The result of ingesting records.
    public struct Output: Sendable {
        /// What to hand the negotiator, in order.
        public var deliveries: [SignalInbox.Delivery] = []
        /// Every envelope and chunk of this session seen (own, stale, current), for GC.
        public var observed: [SignalRecordSummary] = []
        /// What could not be read.
        public var problems: [Problem] = []
    }

    /// One version of one record: its name and the change tag the store gave that version.
    private struct VersionKey: Hashable {
        var name: String
        var tag: String

        /// Hashes the tag and the name's length, and the whole name only when there is no tag.
        /// Every record fetched is looked up by its version, and its name (the session key,
        /// epoch, owner and UUID: ~80 bytes) cost three quarters of the hashing. The store, not a
        /// peer, writes a version's tag, and it tells versions apart (a counter in ours, as in
        /// CloudKit's `recordChangeTag`), so keys spread as well; a peer choosing names cannot
        /// pile keys into one bucket. Equal keys still hash equally (`==` compares both whole).
        func hash(into hasher: inout Hasher) {
            hasher.combine(tag)
            if tag.isEmpty {
                hasher.combine(name)
            } else {
                hasher.combine(name.utf8.count)
            }
        }
    }

    public let myUserID: String
    public let remoteUserID: String
    public let sessionKey: String
    public let protections: SignalingProtections
    /// How far ahead of `now` a remote record's epoch may be; further is refused as malformed.
    /// nil: no limit (only for tests that feed records without a clock).
    public let maxEpochLead: Duration?
    /// The whole seconds of `maxEpochLead`, taken apart once: a duration's components are worked out
    /// by 128-bit division, and every remote record's epoch is checked against them.
    private let maxEpochLeadSeconds: Int64?
    /// Payloads printed in this process, taken instead of parsing their text again.
    public let payloads: SignalPayloadCache?
    public private(set) var counters = Counters()
    /// Records of epochs below this are stale.
    public private(set) var floor: CallEpoch?
    private var seen: Set<VersionKey> = []
    /// Versions read, kept only without deduplication (see `read`).
    private var decodedVersions: [VersionKey: Result<SignalRecord?, SignalRecordError>] = [:]
    private var queues: [CallEpoch: CandidateQueue] = [:]
    /// Versions of our own chunks the store reported saved, with their epochs: fetched, such a
    /// version is ours for certain (a change tag names what the store holds, and anyone else's
    /// save would have made a new one), so it is noted from its fields, not decoded. A chunk that
    /// only names us as its owner is decoded and checked as any other. A handful at a time: each
    /// leaves when it is fetched, or when its epoch falls below the floor.
    private var savedChunks: [(version: VersionKey, epoch: CallEpoch)] = []

    public init(myUserID: String, remoteUserID: String, sessionKey: String,
                protections: SignalingProtections = .all, maxEpochLead: Duration? = nil,
                payloads: SignalPayloadCache? = nil) {
        self.myUserID = myUserID
        self.remoteUserID = remoteUserID
        self.sessionKey = sessionKey
        self.protections = protections
        self.maxEpochLead = maxEpochLead
        maxEpochLeadSeconds = maxEpochLead?.components.seconds
        self.payloads = payloads
        // A call's inbox sees a dozen or so versions: room for them at once, not four regrowths that
        // hash every name and tag seen so far again.
        seen.reserveCapacity(Self.expectedVersions)
    }

    /// How many versions `seen` has room for before it first grows.
    static let expectedVersions = 16

    /// Why `epoch` of `record` is refused at `now`: further ahead than `maxEpochLead`; nil when
    /// it is acceptable (or there is no limit, or no clock).
    public func refusal(of epoch: CallEpoch, in record: Record, now: Instant?) -> SignalRecordError? {
        guard let lead = maxEpochLead, let leadSeconds = maxEpochLeadSeconds, let now else { return nil }
        // Saturating: a lead of years or a clock near the end of time must not trap.
        let leadMs = leadSeconds.multipliedReportingOverflow(by: 1000)
        let nowMs = now.millisecondsSinceEpoch
        let latest = nowMs.addingReportingOverflow(leadMs.overflow ? .max : leadMs.partialValue)
        let bound = latest.overflow || leadMs.overflow ? Int64.max : latest.partialValue
        guard epoch.milliseconds > bound else { return nil }
        return SignalRecordError(.epochTooFarAhead, recordName: record.id.recordName, field: SignalField.callEpoch,
                                 detail: "epoch \(epoch) is more than \(lead) ahead of this device's clock "
                                    + "(\(nowMs) ms)")
    }

    /// Counts a record refused outside `ingest` (the session record read by name) as malformed.
    public mutating func refuse(_ error: SignalRecordError) -> Problem {
        counters.malformed += 1
        return .record(error)
    }

    /// Notes that the store saved `record`, a chunk of ours of `epoch`, as the version it returned.
    public mutating func ownChunkSaved(_ record: Record, epoch: CallEpoch) {
        guard !isStale(epoch) else { return }
        savedChunks.append((VersionKey(name: record.id.recordName, tag: record.recordChangeTag ?? ""), epoch))
    }

    /// The summary of one of our own records, read from its fields alone: any envelope of ours of
    /// this session (its SDP is never needed), or a chunk version the store saved for us (see
    /// `savedChunks`). nil for anything else, which is decoded in full.
    private mutating func ownRecord(_ record: Record, version: VersionKey) -> SignalRecordSummary? {
        switch record.recordType {
        case SignalRecordType.envelope:
            break
        case SignalRecordType.iceChunk:
            guard let saved = savedChunks.firstIndex(where: { $0.version == version }) else { return nil }
            savedChunks.remove(at: saved)
        default:
            return nil
        }
        guard record.fields[SignalField.ownerUserId]?.stringValue == myUserID,
              record.fields[SignalField.sessionKey]?.stringValue == sessionKey,
              let epoch = record.fields[SignalField.callEpoch]?.int64Value, epoch >= 0
        else { return nil }
        return SignalRecordSummary(id: record.id, recordType: record.recordType,
                                   callEpoch: CallEpoch(milliseconds: epoch), ownerUserID: myUserID,
                                   modifiedMs: record.modified?.timestamp)
    }

    /// Ingests fetched records, in any order.
    /// `now` bounds how far ahead a remote epoch may be (`maxEpochLead`).
    public mutating func ingest(_ records: [Record], now: Instant? = nil) -> Output {
        var output = Output()
        // At most one summary per record: room for them at once, not a regrowth as they come.
        output.observed.reserveCapacity(records.count)
        var sessions: [(SignalSession, Record)] = []
        var envelopes: [(SignalEnvelope, Record)] = []
        var chunks: [(chunk: SignalIceChunk, recordName: String)] = []
        for record in records {
            counters.received += 1
            let key = VersionKey(name: record.id.recordName, tag: record.recordChangeTag ?? "")
            if !seen.insert(key).inserted {
                counters.duplicates += 1
                if protections.deduplicate { continue }
            }
            // Our own records are only noted (for GC and answered epochs): read what that needs
            // from their fields and leave their payloads unparsed — half of every fetch is our own.
            if let summary = ownRecord(record, version: key) {
                output.observed.append(summary)
                counters.ownRecords += 1
                continue
            }
            let content: SignalRecord?
            do {
                content = try read(record, version: key)
            } catch {
                counters.malformed += 1
                output.problems.append(.record(error))
                continue
            }
            guard let content, let recordSession = content.sessionKey else {
                counters.unrelated += 1
                continue
            }
            guard recordSession == sessionKey else {
                counters.foreignSession += 1
                continue
            }
            if let summary = SignalRecordSummary(record, content) { output.observed.append(summary) }
            guard let owner = content.ownerUserID, owner != myUserID else {
                counters.ownRecords += 1
                continue
            }
            guard owner == remoteUserID else {
                counters.foreignSession += 1
                continue
            }
            if let epoch = content.callEpoch, let refused = refusal(of: epoch, in: record, now: now) {
                counters.malformed += 1
                output.problems.append(.record(refused))
                continue
            }
            if isStale(content.callEpoch) {
                counters.staleDrops += 1
                continue
            }
            switch content {
            case .session(let session): sessions.append((session, record))
            case .envelope(let envelope): envelopes.append((envelope, record))
            case .iceChunk(let chunk):
                counters.invalidCandidates += chunk.rejectedCandidates.count
                output.problems += chunk.rejectedCandidates.map { .candidate(recordName: record.id.recordName, $0) }
                chunks.append((chunk, record.id.recordName))
            case .room, .member: break
            }
        }
        // Sorted only when there is an order to make: a fetch brings one of each at most, mostly.
        if sessions.count > 1 { sessions.sort { $0.0.callEpoch < $1.0.callEpoch } }
        for (session, record) in sessions {
            output.deliveries.append(.session(session, record))
        }
        func rank(_ e: SignalEnvelope) -> (CallEpoch, Int) { (e.callEpoch, e.envelopeType == .offer ? 0 : 1) }
        if envelopes.count > 1 { envelopes.sort { rank($0.0) < rank($1.0) } }
        for (envelope, record) in envelopes { output.deliveries.append(.envelope(envelope, record)) }
        counters.delivered += sessions.count + envelopes.count
        if chunks.count > 1 { chunks.sort { ($0.chunk.callEpoch, $0.chunk.seq) < ($1.chunk.callEpoch, $1.chunk.seq) } }
        for (chunk, recordName) in chunks {
            var q = queues[chunk.callEpoch] ?? CandidateQueue(epoch: chunk.callEpoch)
            if q.heldCount >= Self.maxHeldChunks {
                counters.malformed += 1
                output.problems.append(.record(SignalRecordError(
                    .tooManyHeldChunks, recordName: recordName, field: SignalField.seq,
                    detail: "seq \(chunk.seq) refused: \(q.heldCount) chunks of epoch \(chunk.callEpoch) "
                        + "are already held (at most \(Self.maxHeldChunks))")))
                continue
            }
            output.deliveries += q.insert(chunk, protections, &counters)
            queues[chunk.callEpoch] = q
        }
        return output
    }

    /// Reads a fetched record as signaling. Without deduplication a version comes again and again:
    /// it is read once all the same. With it, nothing is kept (nor wrapped in a `Result` to keep).
    private mutating func read(_ record: Record, version: VersionKey) throws(SignalRecordError) -> SignalRecord? {
        guard !protections.deduplicate else { return try SignalRecord.decode(record, payloads: payloads) }
        if let known = decodedVersions[version] { return try known.get() }
        let decoded = Result { () throws(SignalRecordError) in try SignalRecord.decode(record, payloads: payloads) }
        decodedVersions[version] = decoded
        return try decoded.get()
    }

    /// The negotiator applied the remote description of `epoch`, whose ICE ufrag is `ufrag`:
    /// the candidates held for it, in order.
    public mutating func remoteDescriptionApplied(epoch: CallEpoch, ufrag: String) -> [Delivery] {
        guard !isStale(epoch) else { return [] }
        // Changed through the dictionary's subscript, so its tables are not shared with a copy.
        return queues[epoch, default: CandidateQueue(epoch: epoch)].release(ufrag: ufrag, protections, &counters)
    }

    /// Records below `epoch` are stale from now on; chunks held for them are dropped.
    public mutating func raiseFloor(to epoch: CallEpoch) {
        guard floor.map({ epoch > $0 }) ?? true else { return }
        floor = epoch
        savedChunks.removeAll { $0.epoch < epoch }
        guard protections.dropStaleEpochs else { return }
        for (held, q) in queues where held < epoch {
            counters.staleDrops += q.heldCount
            queues[held] = nil
        }
    }

    /// Whether records of `epoch` are dropped as stale.
    public func isStale(_ epoch: CallEpoch?) -> Bool {
        guard protections.dropStaleEpochs, let epoch, let floor else { return false }
        return epoch < floor
    }
}
