// `SignalIceChunk`, spec §2 and §4: `IC_<sessionKey>_<callEpoch>_<ownerUserId>_<uuid>`, a batch
// of trickled candidates (RFC 8838) of one epoch and owner, numbered by `seq` (0, 1, 2 … per
// epoch and owner) and tied to the owner's ICE generation by `ufrag` (RFC 8839 §5.4).
import RecordStore
import SDP

/// How a chunk's `candidate` field is encoded (`candidateType`).
public enum CandidateEncoding: String, Hashable, Sendable, CaseIterable {
    /// `{"v":1,"candidates":[…],"eoc":false}` — what we write.
    case batch = "batch-v1"
    /// One `candidate:…` string; an empty string means end-of-candidates. Accepted on input.
    case single
}

/// One batch of trickled candidates.
public struct SignalIceChunk: Hashable, Sendable {
    public var sessionKey: String
    public var roomID: String
    public var callEpoch: CallEpoch
    /// The user whose candidates these are.
    public var ownerUserID: String
    /// How `candidate` was (or will be) encoded.
    public var encoding: CandidateEncoding
    /// The candidates that parsed.
    public var candidates: [ICECandidate]
    /// Candidate strings that did not parse: dropped, each with its reason.
    public var rejectedCandidates: [CandidateParseError]
    /// True when this chunk ends the owner's candidates for the epoch.
    public var endOfCandidates: Bool
    /// When the owner made the chunk, milliseconds since 1970 (the owner's clock).
    public var chunkCreatedAtMs: Int64
    /// The chunk's place among the owner's chunks of the epoch: 0, 1, 2 ….
    public var seq: Int64
    /// The owner's ICE username fragment for the epoch.
    public var ufrag: String

    public init(sessionKey: String, roomID: String, callEpoch: CallEpoch, ownerUserID: String,
                encoding: CandidateEncoding = .batch, candidates: [ICECandidate], endOfCandidates: Bool,
                chunkCreatedAtMs: Int64, seq: Int64, ufrag: String) {
        self.sessionKey = sessionKey
        self.roomID = roomID
        self.callEpoch = callEpoch
        self.ownerUserID = ownerUserID
        self.encoding = encoding
        self.candidates = candidates
        self.rejectedCandidates = []
        self.endOfCandidates = endOfCandidates
        self.chunkCreatedAtMs = chunkCreatedAtMs
        self.seq = seq
        self.ufrag = ufrag
    }

    /// The `candidate` field in this chunk's encoding. A `single` chunk holds at most one
    /// candidate; an end-of-candidates `single` chunk holds the empty string.
    public var candidateField: String {
        switch encoding {
        case .batch:
            return CandidateBatch.json(printing: candidates, endOfCandidates: endOfCandidates)
        case .single:
            return endOfCandidates ? "" : candidates.first?.description ?? ""
        }
    }

    /// The record to save, named `name` in `zone`.
    public func record(name: String, in zone: ZoneID) -> Record { record(name: name, in: zone, payloads: nil) }

    /// The record to save, named `name` in `zone`; `payloads` learns a batch's text.
    public func record(name: String, in zone: ZoneID, payloads: SignalPayloadCache?) -> Record {
        let candidateField = candidateField
        if encoding == .batch { payloads?.remember(candidates, endOfCandidates: endOfCandidates, as: candidateField) }
        return Record(recordType: SignalRecordType.iceChunk, id: RecordID(recordName: name, zoneID: zone), fields: [
            SignalField.sessionKey: .string(sessionKey), SignalField.roomID: .string(roomID),
            SignalField.callEpoch: .int64(callEpoch.milliseconds), SignalField.ownerUserId: .string(ownerUserID),
            SignalField.candidateType: .string(encoding.rawValue), SignalField.candidate: .string(candidateField),
            SignalField.chunkCreatedAt: .timestamp(chunkCreatedAtMs), SignalField.seq: .int64(seq),
            SignalField.ufrag: .string(ufrag),
        ])
    }

    /// Reads a fetched `SignalIceChunk` record. A candidate string that does not parse is kept
    /// in `rejectedCandidates` and the rest of the chunk still counts (its `seq` included); a
    /// chunk whose structure is wrong throws.
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        try self.init(decoding: record, payloads: nil)
    }

    /// Reads a fetched `SignalIceChunk` record as `init(decoding:)` does; a batch `payloads` holds
    /// is taken as remembered.
    public init(decoding record: borrowing Record, payloads: SignalPayloadCache?) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.iceChunk)
        sessionKey = try r.nonEmptyString(SignalField.sessionKey)
        roomID = try r.nonEmptyString(SignalField.roomID)
        callEpoch = try r.epoch()
        ownerUserID = try r.nonEmptyString(SignalField.ownerUserId)
        chunkCreatedAtMs = try r.milliseconds(SignalField.chunkCreatedAt)
        seq = try r.count(SignalField.seq)
        ufrag = try r.nonEmptyString(SignalField.ufrag)
        let typeText = try r.string(SignalField.candidateType)
        guard let encoding = CandidateEncoding(rawValue: typeText) else {
            throw SignalRecordError(.unknownCandidateType, recordName: record.id.recordName,
                                    field: SignalField.candidateType,
                                    detail: "\(SDPGrammar.quoted(typeText, limit: 20)) is neither batch-v1 nor single")
        }
        self.encoding = encoding
        let field = try r.string(SignalField.candidate)
        if encoding == .batch, let known = payloads?.batch(printedAs: field) {
            candidates = known.candidates
            rejectedCandidates = []
            endOfCandidates = known.endOfCandidates
            return
        }
        let texts: [String]
        switch encoding {
        case .batch:
            do {
                let batch = try CandidateBatch(json: field)
                texts = batch.candidates
                endOfCandidates = batch.endOfCandidates
            } catch {
                var located = error
                located.recordName = record.id.recordName
                throw located
            }
        case .single:
            texts = field.isEmpty ? [] : [field]
            endOfCandidates = field.isEmpty
        }
        candidates = []
        rejectedCandidates = []
        for text in texts {
            do {
                candidates.append(try ICECandidate(parsing: text))
            } catch {
                rejectedCandidates.append(error)
            }
        }
    }
}
